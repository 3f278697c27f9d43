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
    # BEGIN SOLUTION
    task_id = r.incr(r.key("queue", "ids"))
    with r.pipeline(transaction=True) as p:
        p.hset(r.key("queue", "tasks"), str(task_id), payload)
        p.zadd(r.key("queue", "due"), {str(task_id): due_ms})
        p.execute()
    return task_id
    # END SOLUTION


def claim(r, now_ms: int, lease_ms: int, limit: int = 10) -> list:
    """Claim up to ``limit`` tasks whose due time is <= ``now_ms``, earliest due first.

    Return ``[[id, payload, attempt], ...]`` (``id`` and ``attempt`` are ints).  Each claimed task
    leaves ``queue:due``, enters ``queue:processing`` with the score ``now_ms + lease_ms`` (its
    lease) and gets its attempt count incremented in ``queue:attempts`` (1 on the first claim).
    Many workers call this at the same moment: a task must never be claimed by two of them.
    Do it in one Lua script (ZRANGEBYSCORE ... LIMIT, then ZREM, ZADD, HINCRBY, HGET for each),
    or use ZREM's reply as the claim.  Cost: O(limit · log N), one round trip.
    """
    # BEGIN SOLUTION
    script = """
    local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
    local claimed = {}
    for _, id in ipairs(ids) do
      redis.call('ZREM', KEYS[1], id)
      redis.call('ZADD', KEYS[2], ARGV[2], id)
      local attempt = redis.call('HINCRBY', KEYS[3], id, 1)
      claimed[#claimed + 1] = {id, redis.call('HGET', KEYS[4], id), attempt}
    end
    return claimed
    """
    keys = [r.key("queue", part) for part in ("due", "processing", "attempts", "tasks")]
    rows = r.eval(script, 4, *keys, now_ms, now_ms + lease_ms, limit)
    return [[int(task_id), payload, int(attempt)] for task_id, payload, attempt in rows]
    # END SOLUTION


def ack(r, task_id: int, attempt: int) -> bool:
    """Acknowledge that claim number ``attempt`` of task ``task_id`` has been executed.

    Return True and delete every trace of the task (processing, due, tasks, attempts) only if
    ``attempt`` is still the task's current attempt.  Return False, changing nothing, when the
    claim is stale (the lease ended and the task was claimed again: the new claim owns it) or the
    task is already acknowledged.  One Lua script, O(log N).
    """
    # BEGIN SOLUTION
    script = """
    if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then
      return 0
    end
    if redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
      return 0
    end
    redis.call('HDEL', KEYS[3], ARGV[1])
    redis.call('HDEL', KEYS[4], ARGV[1])
    return 1
    """
    keys = [r.key("queue", part) for part in ("processing", "due", "attempts", "tasks")]
    return r.eval(script, 4, *keys, str(task_id), str(attempt)) == 1
    # END SOLUTION


def recover(r, now_ms: int) -> int:
    """Give back the tasks of dead workers: every task in ``queue:processing`` whose lease ends at
    or before ``now_ms`` goes back to ``queue:due`` with the score ``now_ms``.  Return how many.

    One Lua script (ZRANGEBYSCORE, then ZREM and ZADD each), O(M · log N) for M expired leases.
    """
    # BEGIN SOLUTION
    script = """
    local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
    for _, id in ipairs(ids) do
      redis.call('ZREM', KEYS[1], id)
      redis.call('ZADD', KEYS[2], ARGV[1], id)
    end
    return #ids
    """
    return int(r.eval(script, 2, r.key("queue", "processing"), r.key("queue", "due"), now_ms))
    # END SOLUTION


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
    # BEGIN SOLUTION
    live = r.key("counter", name)
    pending, pending_id, seq = f"{live}:pending", f"{live}:pending-id", r.key("flush-seq", name)
    claim_script = """
    if redis.call('EXISTS', KEYS[2]) == 0 then
      if redis.call('EXISTS', KEYS[1]) == 0 then
        return false
      end
      redis.call('RENAME', KEYS[1], KEYS[2])
      redis.call('SET', KEYS[3], redis.call('INCR', KEYS[4]))
    end
    return {redis.call('GET', KEYS[3]), redis.call('GET', KEYS[2])}
    """
    claimed = r.eval(claim_script, 4, live, pending, pending_id, seq)
    if not claimed:
        return 0
    number, delta = claimed[0], int(claimed[1])
    flush_id = f"{name}:{number}"
    crash_point("claimed", crash_at)
    with closing(sqlite3.connect(db_path, timeout=30)) as db:
        cur = db.execute("INSERT INTO flushes (flush_id, name, delta) VALUES (?, ?, ?) "
                         "ON CONFLICT (flush_id) DO NOTHING", (flush_id, name, delta))
        fresh = cur.rowcount == 1
        if fresh:
            db.execute("INSERT INTO counters (name, total) VALUES (?, ?) "
                       "ON CONFLICT (name) DO UPDATE SET total = counters.total + excluded.total",
                       (name, delta))
        crash_point("applied", crash_at)
        db.commit()
    crash_point("committed", crash_at)
    release_script = """
    if redis.call('GET', KEYS[2]) == ARGV[1] then
      return redis.call('DEL', KEYS[1], KEYS[2])
    end
    return 0
    """
    r.eval(release_script, 2, pending, pending_id, number)
    return delta if fresh else 0
    # END SOLUTION
