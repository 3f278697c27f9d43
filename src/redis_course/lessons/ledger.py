"""Lesson 05: counters in Redis, the ledger in SQL (SQLite by default, PostgreSQL with ``DATABASE_URL``).

:class:`Ledger` holds the totals; :func:`flush_naive`, :func:`flush_getdel` and :func:`flush_safe` move
counts from Redis into it.  Each flusher takes ``crash_at``, a step after which it "dies"
(:class:`SimulatedCrash`), so a test can stop it at every step and see what was lost or counted twice.
"""

from __future__ import annotations

import os
import re
import secrets
import sqlite3
import tempfile
import threading
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..l10n import _


class SimulatedCrash(Exception):
    """The flushing process died at this step: nothing after it runs, its open transaction is lost."""


STEPS = ("claimed", "applied", "committed")


def crash_point(step: str, crash_at: str | None) -> None:
    """Raise :class:`SimulatedCrash` when ``step`` is the step to crash at."""
    if crash_at is not None and crash_at not in STEPS:
        raise ValueError(f"crash_at must be one of {STEPS} or None")
    if step == crash_at:
        raise SimulatedCrash(_("crashed after step {step!r}", step=step))


class Ledger:
    """The SQL side of billing counters: ``counters(name, total)`` and ``flushes(flush_id, name, delta)``.

    ``target`` is a SQLite file path or a ``postgresql://`` URL (psycopg 3).  Every table name starts
    with ``table_prefix`` so that several runs can share one PostgreSQL database; :meth:`drop`
    removes them.  SQL is written once with ``?`` placeholders; for psycopg they become ``%s``.
    """

    def __init__(self, target: str | os.PathLike, table_prefix: str = "") -> None:
        self.target = str(target)
        self.is_postgres = self.target.startswith(("postgresql://", "postgres://"))
        if not re.fullmatch(r"[a-z0-9_]*", table_prefix):
            raise ValueError("table_prefix: lowercase letters, digits and _ only")
        self.prefix = table_prefix

    @classmethod
    def from_env(cls, directory: str | os.PathLike | None = None) -> "Ledger":
        """PostgreSQL when ``DATABASE_URL`` is set (tables prefixed per run), else a SQLite file."""
        url = os.environ.get("DATABASE_URL")
        if url:
            return cls(url, table_prefix=f"course_{secrets.token_hex(3)}_")
        directory = directory or tempfile.mkdtemp(prefix="course-ledger-")
        return cls(Path(directory) / "ledger.db")

    @property
    def kind(self) -> str:
        return "PostgreSQL" if self.is_postgres else "SQLite"

    def connect(self):
        """A new DB-API connection (autocommit off: every change waits for ``commit()``)."""
        if self.is_postgres:
            import psycopg

            return psycopg.connect(self.target)
        return sqlite3.connect(self.target, timeout=30)

    def sql(self, text: str) -> str:
        text = text.replace("{p}", self.prefix)
        return text.replace("?", "%s") if self.is_postgres else text

    def create(self) -> "Ledger":
        with closing(self.connect()) as db:
            cur = db.cursor()
            cur.execute(
                self.sql("CREATE TABLE IF NOT EXISTS {p}counters (name TEXT PRIMARY KEY, total BIGINT NOT NULL)")
            )
            cur.execute(
                self.sql(
                    "CREATE TABLE IF NOT EXISTS {p}flushes ("
                    "flush_id TEXT PRIMARY KEY, name TEXT NOT NULL, delta BIGINT NOT NULL)"
                )
            )
            db.commit()
        return self

    def drop(self) -> None:
        with closing(self.connect()) as db:
            cur = db.cursor()
            for table in ("counters", "flushes"):
                cur.execute(self.sql(f"DROP TABLE IF EXISTS {{p}}{table}"))
            db.commit()

    def total(self, name: str) -> int:
        with closing(self.connect()) as db:
            cur = db.cursor()
            cur.execute(self.sql("SELECT total FROM {p}counters WHERE name = ?"), (name,))
            row = cur.fetchone()
            db.rollback()
        return int(row[0]) if row else 0

    def applied(self, flush_id: str) -> bool:
        with closing(self.connect()) as db:
            cur = db.cursor()
            cur.execute(self.sql("SELECT 1 FROM {p}flushes WHERE flush_id = ?"), (flush_id,))
            found = cur.fetchone() is not None
            db.rollback()
        return found

    def add(self, name: str, delta: int, *, crash_at: str | None = None) -> None:
        """``total += delta`` in one transaction (an UPSERT), no record of which flush it was."""
        with closing(self.connect()) as db:
            db.cursor().execute(
                self.sql(
                    "INSERT INTO {p}counters (name, total) VALUES (?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET total = {p}counters.total + excluded.total"
                ),
                (name, delta),
            )
            crash_point("applied", crash_at)  # closing without commit: the transaction is rolled back
            db.commit()

    def add_once(self, flush_id: str, name: str, delta: int, *, crash_at: str | None = None) -> bool:
        """Apply ``delta`` unless ``flush_id`` was applied before; False if it was.

        One transaction: INSERT the flush id (ON CONFLICT DO NOTHING), and only if a row was inserted,
        the UPSERT of the total.  Both commit together or not at all, so a retried flush is a no-op.
        """
        with closing(self.connect()) as db:
            cur = db.cursor()
            cur.execute(
                self.sql(
                    "INSERT INTO {p}flushes (flush_id, name, delta) VALUES (?, ?, ?) ON CONFLICT (flush_id) DO NOTHING"
                ),
                (flush_id, name, delta),
            )
            fresh = cur.rowcount == 1
            if fresh:
                cur.execute(
                    self.sql(
                        "INSERT INTO {p}counters (name, total) VALUES (?, ?) "
                        "ON CONFLICT (name) DO UPDATE SET total = {p}counters.total + excluded.total"
                    ),
                    (name, delta),
                )
            crash_point("applied", crash_at)
            db.commit()
        return fresh


def create_ledger(path: str | os.PathLike) -> Ledger:
    """A SQLite ledger at ``path`` with both tables (what lab 05 is given, made inside its box)."""
    return Ledger(path).create()


# ---------------------------------------------------------------------- flushers


def flush_naive(r, ledger: Ledger, name: str, crash_at: str | None = None) -> int:
    """The flush as often written: GET the counter, add it in SQL, SET it back to 0.

    Wrong under traffic: increments that arrive between the GET and the SET are overwritten by
    ``SET 0``.  Wrong after a crash between the commit and the SET: the next flush adds the same
    value again.  Cost: GET + SET (two round trips) and one SQL transaction.
    """
    key = r.key("counter", name)
    delta = int(r.get(key) or 0)
    crash_point("claimed", crash_at)
    if delta:
        ledger.add(name, delta, crash_at=crash_at)
    crash_point("committed", crash_at)
    r.set(key, 0)  # erases whatever arrived since the GET
    return delta


def flush_getdel(r, ledger: Ledger, name: str, crash_at: str | None = None) -> int:
    """GETDEL the counter (atomic: no increment is overwritten), then add it in SQL.

    Right under traffic, wrong after a crash: between GETDEL and the commit the value exists only
    in this process's memory.  Cost: GETDEL (one round trip, O(1)) and one SQL transaction.
    """
    delta = int(r.getdel(r.key("counter", name)) or 0)
    crash_point("claimed", crash_at)  # a crash here loses delta for good
    if delta:
        ledger.add(name, delta, crash_at=crash_at)
    crash_point("committed", crash_at)
    return delta


# --8<-- [start:claim-pending]
CLAIM_PENDING = """
-- KEYS: live counter, pending counter, pending flush id, flush id sequence
if redis.call('EXISTS', KEYS[2]) == 0 then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return false
  end
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('SET', KEYS[3], redis.call('INCR', KEYS[4]))
end
return {redis.call('GET', KEYS[3]), redis.call('GET', KEYS[2])}
"""
# --8<-- [end:claim-pending]

RELEASE_PENDING = """
-- KEYS: pending counter, pending flush id; ARGV: the flush id this flusher applied
if redis.call('GET', KEYS[2]) == ARGV[1] then
  return redis.call('DEL', KEYS[1], KEYS[2])
end
return 0
"""


def pending_keys(r, name: str) -> list[str]:
    """live, pending, pending flush id, sequence: the keys :func:`flush_safe` uses for ``name``."""
    live = r.key("counter", name)
    return [live, f"{live}:pending", f"{live}:pending-id", r.key("flush-seq", name)]


def flush_safe(r, ledger: Ledger, name: str, crash_at: str | None = None) -> int:
    """Move the counter aside atomically, apply it once in SQL, then drop the pending copy.

    1. One Lua script: if no pending copy exists, RENAME the live key to ``<key>:pending`` and give
       it a new flush id (INCR); return the pending flush id and value.  A pending copy left by a
       crashed flush is returned again, with its old id.  New increments start a new live key.
    2. One SQL transaction: record the flush id and add the value, or do nothing if the id is known.
    3. One Lua script: delete the pending copy if it still carries this flush id.

    A crash after any step loses nothing and counts nothing twice: the next flush finishes the job.
    Returns the amount this call added to SQL.  Cost: two EVALSHA (O(1)) and one SQL transaction.
    """
    keys = pending_keys(r, name)
    claimed = r.register_script(CLAIM_PENDING)(keys=keys)
    if not claimed:
        return 0
    seq, value = claimed
    flush_id, delta = f"{name}:{seq}", int(value)
    crash_point("claimed", crash_at)
    fresh = ledger.add_once(flush_id, name, delta, crash_at=crash_at)
    crash_point("committed", crash_at)
    r.register_script(RELEASE_PENDING)(keys=keys[1:3], args=[seq])
    return delta if fresh else 0


def counted(r, ledger: Ledger, name: str) -> int:
    """Every increment exactly once: SQL total + live counter + a pending copy not yet applied."""
    live, pending, pending_id, _ = pending_keys(r, name)
    total = ledger.total(name) + int(r.get(live) or 0)
    seq = r.get(pending_id)
    if r.exists(pending) and not (seq and ledger.applied(f"{name}:{seq}")):
        total += int(r.get(pending) or 0)
    return total


def flush_under_traffic(
    r,
    ledger: Ledger,
    flush: Callable,
    name: str,
    *,
    incrementers: int = 4,
    per_incrementer: int = 2000,
    connect: Callable | None = None,
) -> dict:
    """``incrementers`` threads INCR ``counter:<name>`` while one thread flushes in a loop with ``flush``.

    Returns ``{"increments", "in_sql", "in_redis", "lost"}`` after a last flush with no traffic.
    """
    from .. import connect as course_connect

    connect = connect or (lambda: course_connect(prefix=r.prefix))
    key = r.key("counter", name)
    done = threading.Event()

    def incrementer() -> None:
        c = connect()
        for _hit in range(per_incrementer):
            c.incr(key)

    def flusher() -> None:
        c = connect()
        while not done.is_set():
            flush(c, ledger, name)

    threads = [threading.Thread(target=incrementer) for _ in range(incrementers)]
    f = threading.Thread(target=flusher)
    f.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    f.join()
    flush(r, ledger, name)
    increments = incrementers * per_incrementer
    in_sql, in_redis = ledger.total(name), int(r.get(key) or 0)
    return {"increments": increments, "in_sql": in_sql, "in_redis": in_redis, "lost": increments - in_sql - in_redis}


@contextmanager
def temporary_ledger() -> Iterator[Ledger]:
    """A fresh ledger for a demo or a test: SQLite in a temp dir, or PostgreSQL tables dropped after."""
    with tempfile.TemporaryDirectory(prefix="course-ledger-") as d:
        ledger = Ledger.from_env(d).create()
        try:
            yield ledger
        finally:
            if ledger.is_postgres:
                ledger.drop()
