"""Wrong: leases, stale claims and recovery are right, but max_attempts is ignored: a failed or
abandoned task always goes back to queue:due, so a poison task is retried for ever and nothing
ever reaches the dead-letter hash.
"""


def fail(r, task_id, attempt, reason, retry_at_ms, max_attempts=3):
    lua = """
    local processing, attempts, tasks, due = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
    if redis.call('HEXISTS', tasks, ARGV[1]) == 0 then return 'unknown' end
    if not redis.call('ZSCORE', processing, ARGV[1]) then return 'stale' end
    if redis.call('HGET', attempts, ARGV[1]) ~= ARGV[2] then return 'stale' end
    redis.call('ZREM', processing, ARGV[1])
    redis.call('ZADD', due, ARGV[3], ARGV[1])
    return 'retry'
    """
    keys = [r.key("queue", part) for part in ("processing", "attempts", "tasks", "due")]
    return r.eval(lua, 4, *keys, str(task_id), str(attempt), retry_at_ms)


def recover(r, now_ms, max_attempts=3):
    lua = """
    local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
    for _, id in ipairs(ids) do
      redis.call('ZREM', KEYS[1], id)
      redis.call('ZADD', KEYS[2], ARGV[1], id)
    end
    return #ids
    """
    back = r.eval(lua, 2, r.key("queue", "processing"), r.key("queue", "due"), now_ms)
    return {"requeued": int(back), "dead": 0}
