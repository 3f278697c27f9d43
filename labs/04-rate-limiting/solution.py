"""Lab 04: three rate limiters, each one Lua script (one round trip, atomic).

Every function takes the Redis client ``r`` first and answers with a dict::

    {"allowed": True, "remaining": 4, "retry_after_ms": 0}

* ``allowed``: whether this request may go ahead (it is then counted; a denied request is not);
* ``remaining``: how many more requests would be allowed right now, after this one (0 when denied);
* ``retry_after_ms``: 0 when allowed; otherwise the exact number of milliseconds after ``now_ms``
  at which a request would be allowed.

``now_ms`` is the time in milliseconds.  Tests pass it (a controlled clock); when it is None, read
the Redis server's clock with ``TIME`` inside your script, never the application's clock.

Keys: one key per client and limiter, built with ``r.key(...)`` (for example
``r.key("rl", "fixed", client_id)``).  Every key you write must have a TTL; touch no other key.
Up to 16 processes call these functions at the same time for the same client: read-decide-write
in Python between two round trips is not safe, put the whole decision in one script.
"""

_NOW = """
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local limit, window = tonumber(ARGV[2]), tonumber(ARGV[3])
"""  # every script starts like this: ARGV[1] is now_ms, or '' to read the server's clock


def _decide(r, script: str, key: str, now_ms, limit: int, window_ms: int, *extra) -> dict:
    """Run ``_NOW + script`` with EVAL on ``key``; the script returns {allowed, remaining, retry}."""
    now = "" if now_ms is None else int(now_ms)
    allowed, remaining, retry = r.eval(_NOW + script, 1, key, now, limit, window_ms, *extra)
    return {"allowed": allowed == 1, "remaining": remaining, "retry_after_ms": retry}


def fixed_window(r, client_id: str, limit: int, window_ms: int, now_ms: int | None = None) -> dict:
    """Allow ``limit`` requests per fixed window: windows are [k*window_ms, (k+1)*window_ms).

    A request at ``now_ms`` belongs to window k = now_ms // window_ms.  When the window already
    has ``limit`` allowed requests, deny and retry at the start of the next window.

    Cost: one EVAL; on one key (for instance a hash with the window number and its count, or a
    key per window): HMGET/HSET or INCR, plus PEXPIRE to the end of the window.  O(1).
    """
    # BEGIN SOLUTION
    script = """
    local w = math.floor(now / window)
    local ends_in = (w + 1) * window - now
    local h = redis.call('HMGET', KEYS[1], 'w', 'n')
    local n = 0
    if tonumber(h[1]) == w then n = tonumber(h[2]) end
    if n >= limit then return {0, 0, ends_in} end
    redis.call('HSET', KEYS[1], 'w', w, 'n', n + 1)
    redis.call('PEXPIRE', KEYS[1], ends_in)
    return {1, limit - n - 1, 0}
    """
    return _decide(r, script, r.key("rl", "fixed", client_id), now_ms, limit, window_ms)
    # END SOLUTION


def sliding_window(r, client_id: str, limit: int, window_ms: int, now_ms: int | None = None) -> dict:
    """Allow a request when fewer than ``limit`` requests were allowed in the last ``window_ms``.

    A request allowed at time t counts against every request at a time now with
    t <= now < t + window_ms (at exactly t + window_ms it no longer counts).  Keep a log of the
    times of allowed requests only; when denied, retry when the entry that has to leave does.

    Cost: one EVAL on a sorted set (score = time, member = a unique id):
    ZREMRANGEBYSCORE (drop what left the window) + ZCARD + ZADD + PEXPIRE; O(log N) per request,
    memory O(limit) per client.
    """
    # BEGIN SOLUTION
    import secrets

    script = """
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
    local n = redis.call('ZCARD', KEYS[1])
    if n >= limit then
      local leaving = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
      return {0, 0, tonumber(leaving[2]) + window - now}
    end
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    redis.call('PEXPIRE', KEYS[1], window)
    return {1, limit - n - 1, 0}
    """
    return _decide(r, script, r.key("rl", "log", client_id), now_ms, limit, window_ms, secrets.token_hex(8))
    # END SOLUTION


def token_bucket(r, client_id: str, limit: int, window_ms: int, now_ms: int | None = None) -> dict:
    """A bucket of ``limit`` tokens, full at first, refilled continuously at ``limit`` per ``window_ms``.

    A request takes one token when at least one whole token is there.  Refill is continuous:
    after ``window_ms / limit`` ms one token has come back, after half of that half a token (keep
    the fraction).  ``remaining`` is the number of whole tokens left; when denied,
    ``retry_after_ms`` is the time until one whole token is there, rounded up to a whole ms.

    Cost: one EVAL on one hash (tokens, time of the last update): HMGET + HSET + PEXPIRE until
    the bucket would be full again.  O(1).
    """
    # BEGIN SOLUTION
    # tokens are stored multiplied by window_ms: one token = window_ms units, refill = limit units
    # per ms, so everything stays an exact integer
    script = """
    local full = limit * window
    local h = redis.call('HMGET', KEYS[1], 't', 'ts')
    local t, ts = tonumber(h[1]), tonumber(h[2])
    if not t then t = full; ts = now end
    if now > ts then
      t = math.min(full, t + (now - ts) * limit)
      ts = now
    end
    if t < window then return {0, 0, math.ceil((window - t) / limit)} end
    t = t - window
    redis.call('HSET', KEYS[1], 't', t, 'ts', ts)
    redis.call('PEXPIRE', KEYS[1], math.ceil((full - t) / limit))
    return {1, math.floor(t / window), 0}
    """
    return _decide(r, script, r.key("rl", "bucket", client_id), now_ms, limit, window_ms)
    # END SOLUTION
