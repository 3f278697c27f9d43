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
import time


def _wait_link_up(client, timeout: float = 10.0) -> None:
    """Poll INFO replication until the replica's link to its primary is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.info("replication").get("master_link_status") == "up":
            return
        time.sleep(0.05)
    raise TimeoutError("the replica did not connect to its primary")


def failover_with_always(before: int = 100, after_cut: int = 50) -> dict:
    """INCR ``before`` times with the replica in sync, cut the replica off, INCR ``after_cut`` more,
    kill the primary, promote the replica.  Every INCR is O(1); WAIT blocks up to 100 ms.

    Returns ``{"acked", "wait_in_sync", "wait_after_cut", "old_primary_aof", "new_primary",
    "lost", "old_primary_after_rejoin"}``.
    """
    from ..core.servers import PrivateRedis

    fast_sync = ["--repl-diskless-sync-delay", "0"]        # a full sync starts at once, not after 5 s
    primary = PrivateRedis(persistence="aof-always", extra_args=list(fast_sync))
    replica = PrivateRedis(persistence="aof-always")
    try:
        primary.start()
        replica.extra_args = [*fast_sync, "--replicaof", "127.0.0.1", str(primary.port)]
        replica.start()
        p, rep = primary.client(prefix=""), replica.client(prefix="")
        _wait_link_up(rep)
        for _ in range(before):
            acked = p.incr("payments")
        in_sync = p.execute_command("WAIT", 1, 1000)
        os.killpg(replica.proc.pid, signal.SIGSTOP)          # frozen: a partition, a long GC-like pause
        p.client_kill_filter(_type="replica")                # and the link is gone
        for _ in range(after_cut):
            acked = p.incr("payments")                       # each one fsynced before its reply
        after = p.execute_command("WAIT", 1, 100)
        primary.kill()
        on_disk = _aof_value(primary)
        os.killpg(replica.proc.pid, signal.SIGCONT)
        rep.execute_command("REPLICAOF", "NO", "ONE")        # the failover
        promoted = int(rep.get("payments"))
        primary.extra_args = [*fast_sync, "--replicaof", "127.0.0.1", str(replica.port)]
        primary.start()
        _wait_link_up(primary.client(prefix=""))
        rejoined = int(primary.client(prefix="").get("payments"))
        return {"acked": acked, "wait_in_sync": in_sync, "wait_after_cut": after,
                "old_primary_aof": on_disk, "new_primary": promoted, "lost": acked - promoted,
                "old_primary_after_rejoin": rejoined}
    finally:
        if replica.proc and replica.proc.poll() is None:
            os.killpg(replica.proc.pid, signal.SIGCONT)
        replica.close()
        primary.close()


def _aof_value(srv) -> int:
    """What the dead primary's own AOF holds: start it alone (no replica of anyone) and read it."""
    srv.start()
    value = int(srv.client(prefix="").get("payments") or 0)
    srv.kill()
    return value
