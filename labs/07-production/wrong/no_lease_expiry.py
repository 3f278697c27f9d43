"""Wrong: acquire never drops the leases that ended, so a holder that crashed without releasing keeps its slot for ever."""


def acquire(r, name, holder, limit, lease_ms):
    if int(limit) < 1 or int(lease_ms) < 1:
        raise ValueError("limit and lease_ms must be at least 1")
    lua = """
    local t = redis.call('TIME')
    local now = t[1] * 1000 + math.floor(t[2] / 1000)
    if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
      return 0
    end
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
    if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    return 1
    """
    return r.eval(lua, 1, r.key("sem", name), int(limit), int(lease_ms), holder) == 1
