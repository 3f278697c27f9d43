"""Wrong: the scripts take now from the client's clock (time.time()) instead of the server's TIME, so a command that waited judges leases at the moment it was sent.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""
import time


def _client_now():
    return int(time.time() * 1000)


def acquire(r, name, holder, limit, lease_ms):
    if int(limit) < 1 or int(lease_ms) < 1:
        raise ValueError("limit and lease_ms must be at least 1")
    lua = """
    local now, limit, lease = tonumber(ARGV[4]), tonumber(ARGV[1]), tonumber(ARGV[2])
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= limit then
      return 0
    end
    redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
    if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
    return 1
    """
    return r.eval(lua, 1, r.key("sem", name), int(limit), int(lease_ms), holder, _client_now()) == 1


def release(r, name, holder):
    lua = """
    local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
    redis.call('ZREM', KEYS[1], ARGV[1])
    if score and tonumber(score) > tonumber(ARGV[2]) then return 1 end
    return 0
    """
    return r.eval(lua, 1, r.key("sem", name), holder, _client_now()) == 1


def refresh(r, name, holder, lease_ms):
    if int(lease_ms) < 1:
        raise ValueError("lease_ms must be at least 1")
    lua = """
    local now = tonumber(ARGV[3])
    local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
    if not score or tonumber(score) <= now then return 0 end
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
    if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    return 1
    """
    return r.eval(lua, 1, r.key("sem", name), holder, int(lease_ms), _client_now()) == 1
