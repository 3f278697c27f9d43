"""Wrong: an atomic claim that simply removes the task (ZREM's reply decides the winner), with no
processing set and no lease. No task is claimed twice, but a worker that dies after claiming takes
its tasks with it: nothing can ever give them back, and nothing can tell a live claim from a stale one.
"""
import sqlite3
from contextlib import closing

from redis_course.lessons.faults import crash_point


def schedule(r, payload: str, due_ms: int) -> int:
    """Add a task that is due at ``due_ms``; return its new id.  (Given: the lesson's ``schedule``.)

    INCR ``queue:ids`` for the id, then HSET ``queue:tasks`` and ZADD ``queue:due`` in one
    MULTI/EXEC.  Cost: two round trips, O(log N).
    """
    task_id = r.incr(r.key("queue", "ids"))
    with r.pipeline() as tx:                       # a transaction (MULTI/EXEC) by default
        tx.hset(r.key("queue", "tasks"), str(task_id), payload)
        tx.zadd(r.key("queue", "due"), {str(task_id): due_ms})
        tx.execute()
    return task_id


def claim(r, now_ms, lease_ms, limit=10):
    due, tasks = r.key("queue", "due"), r.key("queue", "tasks")
    claimed = []
    for task_id in r.zrangebyscore(due, "-inf", now_ms, start=0, num=limit):
        if r.zrem(due, task_id) == 1:             # only the worker whose ZREM removed it owns it
            attempt = r.hincrby(r.key("queue", "attempts"), task_id, 1)
            claimed.append([int(task_id), r.hget(tasks, task_id), attempt])
    return claimed


def ack(r, task_id, attempt):
    removed = r.hdel(r.key("queue", "tasks"), str(task_id))
    r.hdel(r.key("queue", "attempts"), str(task_id))
    return "acked" if removed else "unknown"


def fail(r, task_id, attempt, reason, retry_at_ms, max_attempts=3):
    if not r.hexists(r.key("queue", "tasks"), str(task_id)):
        return "unknown"
    if attempt < max_attempts:
        r.zadd(r.key("queue", "due"), {str(task_id): retry_at_ms})
        return "retry"
    r.hset(r.key("queue", "dead"), str(task_id), reason)
    return "dead"


def recover(r, now_ms, max_attempts=3):
    return {"requeued": 0, "dead": 0}             # nothing to recover: claimed tasks are gone


def flush(r, db_path: str) -> dict:
    """Move the usage counted in the hash ``usage`` into the SQLite database at ``db_path``.

    Add each customer's units to ``counters.total`` of the row ``name = <customer>`` (create rows
    that are missing) and return what this call added, ``{customer: units}`` (``{}`` if nothing).
    Usage keeps arriving while you flush, and several flushers may run at once: no unit may be
    lost or counted twice.  The process may die after any step: call ``crash_point`` with the step
    ``"claimed"`` once the batch is taken from Redis, ``"applied"`` after the SQL writes and before
    the commit, and ``"committed"`` after the commit.  A later ``flush`` must finish the job.

    The recipe, as in the lesson but for a whole hash: atomically move ``usage`` aside to a pending
    hash with a new batch id (Lua: RENAME + INCR, or return the pending batch left by a crash, with
    HGETALL); in one SQL transaction INSERT the batch id into ``flushes`` and, only if it was new,
    add every customer's units; then delete the pending hash if it still carries that batch id.
    Cost: two EVAL round trips, O(C) for C customers, and one SQL transaction.
    """
    live = r.key("usage")
    names = [live, r.key("usage", "pending"), r.key("usage", "pending", "batch"), r.key("usage", "batches")]
    take = """
    local live, pending, batch_of_pending, batches = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
    local batch = redis.call('GET', batch_of_pending)
    if not batch then
      if redis.call('EXISTS', live) == 0 then return false end
      batch = redis.call('INCR', batches)
      redis.call('RENAME', live, pending)          -- HINCRBY from now on starts a fresh hash
      redis.call('SET', batch_of_pending, batch)
    end
    return {tostring(batch), redis.call('HGETALL', pending)}
    """
    batch = r.eval(take, 4, *names)
    if not batch:
        return {}
    batch_id, flat = batch
    units = {flat[i]: int(flat[i + 1]) for i in range(0, len(flat), 2)}
    crash_point("claimed")
    with closing(sqlite3.connect(db_path, timeout=30)) as sql:
        first_time = sql.execute(
            "INSERT INTO flushes (flush_id, name, delta) VALUES (?, 'usage', ?) ON CONFLICT DO NOTHING",
            (f"usage:{batch_id}", sum(units.values()))).rowcount == 1
        if first_time:
            sql.executemany(
                "INSERT INTO counters (name, total) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET total = total + excluded.total", units.items())
        crash_point("applied")
        sql.commit()
    crash_point("committed")
    done = """
    local pending, batch_of_pending = KEYS[1], KEYS[2]
    if redis.call('GET', batch_of_pending) ~= ARGV[1] then return 0 end
    return redis.call('DEL', pending, batch_of_pending)
    """
    r.eval(done, 2, names[1], names[2], batch_id)
    return units if first_time else {}
