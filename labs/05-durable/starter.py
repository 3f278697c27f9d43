"""Lab 05: a delayed task queue that survives dead workers, and counters flushed to SQL without loss.

Every function takes the Redis client ``r`` first.  Build key names with ``r.key(...)``.  Time is
always given to you in milliseconds (``now_ms``, ``due_ms``): never read the clock.

Part 1, the queue.  Keys:

* ``queue:ids`` — INCR gives each new task its id (1, 2, 3, ...);
* ``queue:tasks`` — a hash: field = task id, value = the payload;
* ``queue:due`` — a sorted set: member = task id, score = when it is due (ms);
* ``queue:processing`` — a sorted set: member = task id, score = when its lease ends (ms);
* ``queue:attempts`` — a hash: field = task id, value = how many times it was claimed.

Part 2, the flusher.  Other processes count with ``INCR counter:<name>``.  ``flush`` moves what
was counted into a SQLite database whose tables already exist::

    CREATE TABLE counters (name TEXT PRIMARY KEY, total BIGINT NOT NULL);
    CREATE TABLE flushes (flush_id TEXT PRIMARY KEY, name TEXT NOT NULL, delta BIGINT NOT NULL);

The grader makes ``flush`` crash on purpose with ``crash_at``: call ``crash_point(step, crash_at)``
after each step; it raises ``SimulatedCrash`` at the chosen step, as if the process died there.
"""
import sqlite3
from contextlib import closing

from redis_course.lessons.durable import SimulatedCrash, crash_point  # noqa: F401 (used by flush)


def schedule(r, payload: str, due_ms: int) -> int:
    """Add a task that is due at ``due_ms``; return its new id.

    INCR ``queue:ids`` for the id, then store the payload (HSET ``queue:tasks``) and the due time
    (ZADD ``queue:due``) together in one MULTI/EXEC.  Cost: two round trips, O(log N).
    """
    raise NotImplementedError("schedule: your code here")


def claim(r, now_ms: int, lease_ms: int, limit: int = 10) -> list:
    """Claim up to ``limit`` tasks whose due time is <= ``now_ms``, earliest due first.

    Return ``[[id, payload, attempt], ...]`` (``id`` and ``attempt`` are ints).  Each claimed task
    leaves ``queue:due``, enters ``queue:processing`` with the score ``now_ms + lease_ms`` (its
    lease) and gets its attempt count incremented in ``queue:attempts`` (1 on the first claim).
    Many workers call this at the same moment: a task must never be claimed by two of them.
    Do it in one Lua script (ZRANGEBYSCORE ... LIMIT, then ZREM, ZADD, HINCRBY, HGET for each),
    or use ZREM's reply as the claim.  Cost: O(limit · log N), one round trip.
    """
    raise NotImplementedError("claim: your code here")


def ack(r, task_id: int, attempt: int) -> bool:
    """Acknowledge that claim number ``attempt`` of task ``task_id`` has been executed.

    Return True and delete every trace of the task (processing, due, tasks, attempts) only if
    ``attempt`` is still the task's current attempt.  Return False, changing nothing, when the
    claim is stale (the lease ended and the task was claimed again: the new claim owns it) or the
    task is already acknowledged.  One Lua script, O(log N).
    """
    raise NotImplementedError("ack: your code here")


def recover(r, now_ms: int) -> int:
    """Give back the tasks of dead workers: every task in ``queue:processing`` whose lease ends at
    or before ``now_ms`` goes back to ``queue:due`` with the score ``now_ms``.  Return how many.

    One Lua script (ZRANGEBYSCORE, then ZREM and ZADD each), O(M · log N) for M expired leases.
    """
    raise NotImplementedError("recover: your code here")


def flush(r, db_path: str, name: str, crash_at: str | None = None) -> int:
    """Move the increments counted in ``counter:<name>`` into the SQLite database at ``db_path``.

    Add them to ``counters.total`` of the row ``name`` (create the row if missing) and return how
    much this call added.  Increments keep arriving while you flush, and several flushers may run
    at once: none may be lost or counted twice.  The process may die after any step: call
    ``crash_point("claimed", crash_at)`` once the value is taken from Redis,
    ``crash_point("applied", crash_at)`` after the SQL writes and before the commit, and
    ``crash_point("committed", crash_at)`` after the commit.  A later ``flush`` must finish the job.

    The recipe: atomically move the live key aside to a pending key with a new flush id (Lua:
    RENAME + INCR, or return the pending one left by a crash); in one SQL transaction INSERT the
    flush id into ``flushes`` and, only if it was new, add the delta; then delete the pending key
    if it still carries that flush id.  Cost: two EVAL round trips and one SQL transaction.
    """
    raise NotImplementedError("flush: your code here")
