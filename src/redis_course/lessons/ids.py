"""Lesson 01: ids from INCR are unique only while the server keeps every acknowledged write.

:func:`reissued_after_restart` hands out ids with INCR on a private ``redis-server``, lets it take
a snapshot part-way, kills it with SIGKILL and starts it again on the same data directory: with
the default persistence the next INCR answers an id that was already handed out.
:class:`EpochIds` shows one fix, an epoch prefix: every Redis process (its ``run_id``) gets a new
epoch number from a database table, so ``2-101`` after a restart cannot collide with ``1-101``.
:func:`sequence_id` is the other fix, a database sequence (SQLite ``AUTOINCREMENT`` here).
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing


def reissued_after_restart(persistence: str = "default", handed_out: int = 150, snapshot_at: int = 100) -> dict:
    """INCR ``handed_out`` ids on a private server (``SAVE`` after ``snapshot_at`` of them, as a
    scheduled snapshot would), SIGKILL it, restart it on the same data directory, INCR once more.

    Returns ``{"persistence", "handed_out", "survived", "next_id", "reissued"}``: ``reissued`` is
    how many ids the restarted server will hand out a second time.  INCR is O(1), SAVE O(N).
    """
    from ..core.servers import PrivateRedis

    srv = PrivateRedis(persistence=persistence)
    try:
        srv.start()
        c = srv.client(prefix="")
        for n in range(1, handed_out + 1):
            assert c.incr("ids:order") == n
            if n == snapshot_at:
                c.save()  # the snapshot the save rules would take, made now
        _written(c)
        c.close()
        srv.kill()  # SIGKILL: an OOM kill or a crash, no final save
        srv.start()
        c = srv.client(prefix="")
        survived = int(c.get("ids:order") or 0)
        next_id = c.incr("ids:order")
        c.close()
        return {
            "persistence": persistence,
            "handed_out": handed_out,
            "survived": survived,
            "next_id": next_id,
            "reissued": handed_out - survived,
        }
    finally:
        srv.close()


def _written(c, timeout: float = 10.0) -> None:
    """Wait until the server has handed its AOF buffer to the kernel, as it does at once on a disk
    that keeps up: with an fsync still running, Redis holds writes back for up to 2 s, and what it
    holds a SIGKILL takes (the lesson says so).  The demonstration is about a disk that keeps up.
    ``INFO persistence`` is O(1)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = c.info("persistence")
        if not info.get("aof_enabled") or not info.get("aof_buffer_length"):
            return
        time.sleep(0.05)


class EpochIds:
    """Ids ``"<epoch>-<n>"``: ``n`` from INCR, ``epoch`` from a database, one per Redis process.

    INCR and ``INFO server`` travel in one MULTI/EXEC, so ``n`` and the ``run_id`` of the process
    that produced it belong together.  A restarted server (or a promoted replica) has a new
    ``run_id``, the database gives it a new epoch, and an ``n`` handed out again after a rollback
    carries a different prefix.  The epoch table is SQLite here; any database that commits works.
    One round trip per id (O(1)), one SQL round trip per new ``run_id``.
    """

    def __init__(self, r, key: str, db_path: str) -> None:
        self.r, self.key, self.db_path = r, key, db_path
        self._epochs: dict[str, int] = {}
        with closing(sqlite3.connect(db_path)) as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS epochs ("
                "epoch INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT UNIQUE NOT NULL)"
            )
            db.commit()

    def epoch(self, run_id: str) -> int:
        """The epoch of this Redis process: created on first sight, committed, then cached."""
        if run_id not in self._epochs:
            with closing(sqlite3.connect(self.db_path)) as db:
                db.execute("INSERT INTO epochs (run_id) VALUES (?) ON CONFLICT (run_id) DO NOTHING", (run_id,))
                db.commit()
                self._epochs[run_id] = db.execute("SELECT epoch FROM epochs WHERE run_id = ?", (run_id,)).fetchone()[0]
        return self._epochs[run_id]

    def next(self) -> str:
        with self.r.pipeline(transaction=True) as p:
            p.incr(self.key)
            p.info("server")
            n, info = p.execute()
        return f"{self.epoch(info['run_id'])}-{n}"


def sequence_id(db_path: str) -> int:
    """A durable id from a database sequence: SQLite ``INTEGER PRIMARY KEY AUTOINCREMENT``.

    The id is taken by an INSERT and is durable once committed; SQLite never hands the same
    AUTOINCREMENT value out again, even after the row is deleted or the file is reopened.
    """
    with closing(sqlite3.connect(db_path)) as db:
        db.execute("CREATE TABLE IF NOT EXISTS order_ids (id INTEGER PRIMARY KEY AUTOINCREMENT)")
        new_id = db.execute("INSERT INTO order_ids DEFAULT VALUES").lastrowid
        db.commit()
    return int(new_id)


def epoch_ids_across_restart(db_path: str, handed_out: int = 150, snapshot_at: int = 100, after: int = 60) -> dict:
    """The crash of :func:`reissued_after_restart` (default persistence), with :class:`EpochIds`.

    Returns the first and last id before and after the restart, how many bare INCR numbers were
    handed out twice, and how many epoch ids were (none).
    """
    from ..core.servers import PrivateRedis

    srv = PrivateRedis(persistence="default")
    try:
        srv.start()
        ids = EpochIds(srv.client(prefix=""), "ids:order", db_path)
        before = []
        for n in range(1, handed_out + 1):
            before.append(ids.next())
            if n == snapshot_at:
                ids.r.save()
        srv.kill()
        srv.start()
        ids.r = srv.client(prefix="")
        later = [ids.next() for _ in range(after)]
        numbers = [i.split("-")[1] for i in before + later]
        return {
            "before": (before[0], before[-1]),
            "after": (later[0], later[-1]),
            "numbers_twice": len(numbers) - len(set(numbers)),
            "ids_twice": len(before + later) - len(set(before + later)),
        }
    finally:
        srv.close()
