"""Lesson 05: how many acknowledged INCRs a crash of one redis-server loses, under RDB and AOF.

:func:`measure_loss` hammers a private server with ``INCR``, kills it with SIGKILL, restarts it on the
same data directory and counts what did not come back.
"""

from __future__ import annotations

import time


MODES = ("rdb", "aof-everysec", "aof-always")


def measure_loss(persistence: str, seconds: float = 1.0, *, key: str = "counter") -> dict:
    """Start a private redis-server, INCR one key as fast as one client can for ``seconds``, SIGKILL
    the server, restart it on the same data directory and count the acknowledged increments lost.

    Returns ``{"mode", "acked", "survived", "lost", "ops_per_s"}``.  ``acked`` is the last reply of
    INCR: every increment up to it was acknowledged to the client.  One INCR per round trip (O(1)).
    """
    from ..core.servers import PrivateRedis

    srv = PrivateRedis(persistence=persistence)
    try:
        srv.start()
        c = srv.client(prefix="")
        acked, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            acked = c.incr(key)
        elapsed = time.perf_counter() - started
        c.close()
        srv.kill()  # SIGKILL: no shutdown, no final save
        srv.start()  # same data directory: load what was persisted
        c = srv.client(prefix="")
        survived = int(c.get(key) or 0)
        c.close()
        return {
            "mode": persistence,
            "acked": acked,
            "survived": survived,
            "lost": acked - survived,
            "ops_per_s": acked / elapsed,
        }
    finally:
        srv.close()
