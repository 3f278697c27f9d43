"""Wrong: the article's loop. ZRANGEBYSCORE reads the due ids, then each is removed with its own
ZREM whose reply is ignored. Alone it works; with several workers two of them read the same ids
before either removes them, and both run the task.
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
    due, processing = r.key("queue", "due"), r.key("queue", "processing")
    claimed = []
    for task_id in r.zrangebyscore(due, "-inf", now_ms, start=0, num=limit):
        r.zrem(due, task_id)                      # the reply says whether we won: ignored
        r.zadd(processing, {task_id: now_ms + lease_ms})
        attempt = r.hincrby(r.key("queue", "attempts"), task_id, 1)
        claimed.append([int(task_id), r.hget(r.key("queue", "tasks"), task_id), attempt])
    return claimed


def ack(r, task_id: int, attempt: int) -> str:
    """Acknowledge that claim number ``attempt`` of task ``task_id`` has been executed.

    Return ``"acked"`` and delete every trace of the task (processing, tasks, attempts) only if the
    task is in ``queue:processing`` and ``attempt`` is its current attempt: this claim holds the
    live lease.  Return ``"stale"``, changing nothing, when the task still exists but this claim no
    longer holds it (its lease ran out and it went back to ``queue:due``, another claim owns it, or
    it is dead), and ``"unknown"`` when there is no such task (never scheduled, or already acked).
    One Lua script, O(log N).
    """
    lua = """
    local processing, attempts, tasks = KEYS[1], KEYS[2], KEYS[3]
    local id, attempt = ARGV[1], ARGV[2]
    if redis.call('HEXISTS', tasks, id) == 0 then return 'unknown' end
    if not redis.call('ZSCORE', processing, id) then return 'stale' end
    if redis.call('HGET', attempts, id) ~= attempt then return 'stale' end
    redis.call('ZREM', processing, id)
    redis.call('HDEL', attempts, id)
    redis.call('HDEL', tasks, id)
    return 'acked'
    """
    names = [r.key("queue", part) for part in ("processing", "attempts", "tasks")]
    return r.eval(lua, 3, *names, str(task_id), str(attempt))


def fail(r, task_id: int, attempt: int, reason: str, retry_at_ms: int, max_attempts: int = 3) -> str:
    """Report that claim number ``attempt`` of task ``task_id`` failed with ``reason``.

    Only the live lease may do this (the same rule as ``ack``: ``"stale"`` or ``"unknown"`` otherwise,
    changing nothing).  The task leaves ``queue:processing``; if ``attempt < max_attempts`` it goes
    back to ``queue:due`` with the score ``retry_at_ms`` and the result is ``"retry"``; otherwise it
    goes to ``queue:dead`` (field = id, value = ``reason``) and the result is ``"dead"``.
    One Lua script, O(log N).
    """
    lua = """
    local processing, attempts, tasks, due, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
    local id, attempt, reason, retry_at, max_attempts = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
    if redis.call('HEXISTS', tasks, id) == 0 then return 'unknown' end
    local leased = redis.call('ZSCORE', processing, id)
    if not leased or redis.call('HGET', attempts, id) ~= attempt then return 'stale' end
    redis.call('ZREM', processing, id)
    if tonumber(attempt) < tonumber(max_attempts) then
      redis.call('ZADD', due, retry_at, id)
      return 'retry'
    end
    redis.call('HSET', dead, id, reason)
    return 'dead'
    """
    names = [r.key("queue", part) for part in ("processing", "attempts", "tasks", "due", "dead")]
    return r.eval(lua, 5, *names, str(task_id), str(attempt), reason, retry_at_ms, max_attempts)


def recover(r, now_ms: int, max_attempts: int = 3) -> dict:
    """Deal with the tasks of dead workers: every task in ``queue:processing`` whose lease ends at or
    before ``now_ms`` leaves it.  A task claimed fewer than ``max_attempts`` times goes back to
    ``queue:due`` with the score ``now_ms``; one that has had all its attempts goes to ``queue:dead``
    with the reason ``"lease expired"``.  Return ``{"requeued": n, "dead": m}``.

    One Lua script (ZRANGEBYSCORE, then for each: ZREM, HGET attempts, ZADD or HSET),
    O(M · log N) for M expired leases.
    """
    lua = """
    local processing, due, attempts, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
    local now, max_attempts = ARGV[1], tonumber(ARGV[2])
    local back, buried = 0, 0
    for _, task in ipairs(redis.call('ZRANGEBYSCORE', processing, '-inf', now)) do
      redis.call('ZREM', processing, task)
      if tonumber(redis.call('HGET', attempts, task) or '0') < max_attempts then
        redis.call('ZADD', due, now, task)
        back = back + 1
      else
        redis.call('HSET', dead, task, 'lease expired')
        buried = buried + 1
      end
    end
    return {back, buried}
    """
    names = [r.key("queue", part) for part in ("processing", "due", "attempts", "dead")]
    back, dead = r.eval(lua, 4, *names, now_ms, max_attempts)
    return {"requeued": int(back), "dead": int(dead)}


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
