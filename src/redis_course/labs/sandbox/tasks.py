"""The grader's own work inside the box: what must touch files the student's processes can write.

A task process is forked by the box's fork server like a student process, but runs only the
functions listed in :data:`TASKS` and never imports student code; the grader calls them through
:meth:`.box.Box.task`.  So the grader never opens, follows or locks a path a student could have
replaced with a link (lab 05's ledger): a task reads it inside the box, with the box's rights, and
the grader checks what comes back (a bounded JSON value) like any other answer from the box.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile

TASKS = ("ledger_create", "ledger_total", "ledger_lock", "ledger_unlock")

_locks: dict[str, sqlite3.Connection] = {}


def ledger_create() -> str:
    """A fresh SQLite ledger with both tables in a new folder of the box's work folder; its path."""
    from redis_course.lessons.ledger import create_ledger

    folder = tempfile.mkdtemp(prefix="ledger-", dir=os.getcwd())
    os.chmod(folder, 0o755)
    path = os.path.join(folder, "ledger.db")
    create_ledger(path)
    return path


def _check(path: str) -> str:
    """``path`` must be a ledger this box made (a regular file, reached without links)."""
    real = os.path.realpath(path)
    if real != os.path.abspath(path) or not os.path.basename(os.path.dirname(real)).startswith("ledger-"):
        raise ValueError("not a ledger of this box")
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not (os.fstat(fd).st_mode & 0o170000 == 0o100000):
            raise ValueError("the ledger is not a regular file")
    finally:
        os.close(fd)
    return real


def ledger_total(path: str, name: str) -> int:
    """counters.total of ``name`` in the ledger at ``path`` (0 if no row); ``counters`` must be a table."""
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{_check(path)}?mode=ro", uri=True, timeout=30)) as db:
        db.execute("PRAGMA trusted_schema = OFF")
        kind = db.execute("SELECT type FROM sqlite_master WHERE name = 'counters'").fetchone()
        if not kind or kind[0] != "table":
            raise ValueError("the ledger has no counters table")
        row = db.execute("SELECT total FROM counters WHERE name = ?", (name,)).fetchone()
    return int(row[0]) if row else 0


def ledger_lock(path: str) -> bool:
    """Hold an exclusive lock on the ledger (a busy database) until :func:`ledger_unlock`."""
    db = sqlite3.connect(_check(path), timeout=5, isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    _locks[path] = db
    return True


def ledger_unlock(path: str) -> bool:
    db = _locks.pop(path, None)
    if db is None:
        return False
    db.rollback()
    db.close()
    return True
