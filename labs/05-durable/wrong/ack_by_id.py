"""Wrong: ack and fail look only at the task id, not at the claim: a worker whose lease ran out
(and whose task another worker now holds) still acknowledges or fails it, so the task is finished
or rescheduled behind the back of the claim that owns it.
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


def claim(r, now_ms: int, lease_ms: int, limit: int = 10) -> list:
    """Claim up to ``limit`` tasks whose due time is <= ``now_ms``, earliest due first.

    Return ``[[id, payload, attempt], ...]`` (``id`` and ``attempt`` are ints).  Each claimed task
    leaves ``queue:due``, enters ``queue:processing`` with the score ``now_ms + lease_ms`` (its
    lease) and gets its attempt count incremented in ``queue:attempts`` (1 on the first claim).
    Many workers call this at the same moment: a task must never be claimed by two of them.
    One Lua script, one round trip, O(limit · log N).
    """
    lua = """
    local due, processing, attempts, tasks = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
    local now, limit, lease_end = ARGV[1], tonumber(ARGV[2]), ARGV[3]
    local out = {}
    for i, task in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)) do
      redis.call('ZREM', due, task)
      redis.call('ZADD', processing, lease_end, task)
      out[i] = {task, redis.call('HGET', tasks, task), redis.call('HINCRBY', attempts, task, 1)}
    end
    return out
    """
    names = [r.key("queue", "due"), r.key("queue", "processing"), r.key("queue", "attempts"),
             r.key("queue", "tasks")]
    return [[int(task), payload, int(n)]
            for task, payload, n in r.eval(lua, 4, *names, now_ms, limit, now_ms + lease_ms)]


def ack(r, task_id, attempt):
    lua = """
    if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 0 then return 'unknown' end
    redis.call('ZREM', KEYS[1], ARGV[1])
    redis.call('ZREM', KEYS[4], ARGV[1])
    redis.call('HDEL', KEYS[2], ARGV[1])
    redis.call('HDEL', KEYS[3], ARGV[1])
    return 'acked'
    """
    keys = [r.key("queue", part) for part in ("processing", "attempts", "tasks", "due")]
    return r.eval(lua, 4, *keys, str(task_id))


def fail(r, task_id, attempt, reason, retry_at_ms, max_attempts=3):
    lua = """
    if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 0 then return 'unknown' end
    redis.call('ZREM', KEYS[1], ARGV[1])
    if tonumber(ARGV[2]) < tonumber(ARGV[5]) then
      redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
      return 'retry'
    end
    redis.call('ZREM', KEYS[4], ARGV[1])
    redis.call('HSET', KEYS[5], ARGV[1], ARGV[3])
    return 'dead'
    """
    keys = [r.key("queue", part) for part in ("processing", "attempts", "tasks", "due", "dead")]
    return r.eval(lua, 5, *keys, str(task_id), str(attempt), reason, retry_at_ms, max_attempts)


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
