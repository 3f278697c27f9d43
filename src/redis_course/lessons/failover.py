"""Lesson 05: AOF ``always`` keeps every acknowledged write on one server, not across a failover.

:func:`failover_with_always` starts a private primary and a private replica, both with
``appendfsync always``.  The replica is frozen (SIGSTOP) and its link cut, as a network partition
would; the primary acknowledges more increments, each fsynced to its own AOF before the reply,
and ``WAIT`` reports that no replica has them.  Then the primary is killed, the replica promoted
(``REPLICAOF NO ONE``, what Sentinel or a cluster would do), and the old primary restarted as a
replica of the new one: it resynchronises and its AOF's extra increments are gone for good.
"""

from __future__ import annotations

import os
import signal

from .switchover import FAST_SYNC, primary_and_replica, wait_link_up


def failover_with_always(before: int = 100, after_cut: int = 50) -> dict:
    """INCR ``before`` times with the replica in sync, cut the replica off, INCR ``after_cut`` more,
    kill the primary, promote the replica.  Every INCR is O(1); WAIT blocks up to 100 ms.

    Returns ``{"acked", "wait_in_sync", "wait_after_cut", "old_primary_aof", "new_primary",
    "lost", "old_primary_after_rejoin"}``.
    """
    with primary_and_replica(persistence="aof-always") as (primary, replica):
        p, rep = primary.client(prefix=""), replica.client(prefix="")
        for _ in range(before):
            acked = p.incr("payments")
        in_sync = p.execute_command("WAIT", 1, 1000)
        os.killpg(replica.proc.pid, signal.SIGSTOP)  # frozen: a partition, a long GC-like pause
        p.client_kill_filter(_type="replica")  # and the link is gone
        for _ in range(after_cut):
            acked = p.incr("payments")  # each one fsynced before its reply
        after = p.execute_command("WAIT", 1, 100)
        primary.kill()
        on_disk = _aof_value(primary)
        os.killpg(replica.proc.pid, signal.SIGCONT)
        rep.execute_command("REPLICAOF", "NO", "ONE")  # the failover
        promoted = int(rep.get("payments"))
        primary.extra_args = [*FAST_SYNC, "--replicaof", "127.0.0.1", str(replica.port)]
        primary.start()
        wait_link_up(primary.client(prefix=""))
        rejoined = int(primary.client(prefix="").get("payments"))
        return {
            "acked": acked,
            "wait_in_sync": in_sync,
            "wait_after_cut": after,
            "old_primary_aof": on_disk,
            "new_primary": promoted,
            "lost": acked - promoted,
            "old_primary_after_rejoin": rejoined,
        }


def _aof_value(srv) -> int:
    """What the dead primary's own AOF holds: start it alone (no replica of anyone) and read it."""
    srv.start()
    value = int(srv.client(prefix="").get("payments") or 0)
    srv.kill()
    return value
