"""claim takes every due task, ignoring limit."""


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
    for i, task in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now)) do
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
