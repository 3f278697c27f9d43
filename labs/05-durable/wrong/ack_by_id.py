"""Wrong: ack and fail look only at the task id, not at the claim: a worker whose lease ran out
(and whose task another worker now holds) still acknowledges or fails it, so the task is finished
or rescheduled behind the back of the claim that owns it.
"""


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
