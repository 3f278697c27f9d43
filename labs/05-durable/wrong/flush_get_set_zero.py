"""Wrong: the flush as it is usually written, for a hash: HGETALL the usage, add it in SQL, then
HSET every field back to 0. Usage that arrives between the HGETALL and the HSET is erased, and a
crash after the commit makes the next flush add the same batch again.
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


def flush(r, db_path):
    key = r.key("usage")
    units = {customer: int(n) for customer, n in r.hgetall(key).items() if int(n)}
    crash_point("claimed")
    if units:
        with closing(sqlite3.connect(db_path, timeout=30)) as db:
            db.executemany("INSERT INTO counters (name, total) VALUES (?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET total = total + excluded.total", units.items())
            crash_point("applied")
            db.commit()
    crash_point("committed")
    if units:
        r.hset(key, mapping={customer: 0 for customer in units})   # erases what arrived since HGETALL
    return units
