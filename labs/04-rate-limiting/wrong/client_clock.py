"""Wrong: the application's clock.

Every limiter takes the time from time.time() on the application server instead of the clock it is
given (or Redis TIME): two application servers whose clocks disagree split one window in two.
"""

import time


def _decide(r, script: str, key: str, limits, cost: int, now_ms) -> dict:
    """Run ``_PRELUDE + script`` with EVAL on ``key``; the script returns {allowed, remaining, retry}.

    Checks the arguments first: at least one ``[limit, window_ms]`` pair, all at least 1, and
    1 <= cost <= every limit (a bigger request could never be allowed).
    """
    pairs = [(int(limit), int(window_ms)) for limit, window_ms in limits]
    if not pairs or any(limit < 1 or window_ms < 1 for limit, window_ms in pairs):
        raise ValueError("limits must be a non-empty list of [limit, window_ms] pairs, all at least 1")
    if not 1 <= int(cost) <= min(limit for limit, _ in pairs):
        raise ValueError("cost must be at least 1 and at most the smallest limit")
    now = int(time.time() * 1000)  # the application server's clock
    args = [now, int(cost), secrets.token_hex(8)] + [n for pair in pairs for n in pair]
    allowed, remaining, retry = r.eval(_PRELUDE + script, 1, key, *args)
    return {"allowed": allowed == 1, "remaining": remaining, "retry_after_ms": retry}


def fixed_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """Fixed windows on the clock, one per limit: for ``[limit, window_ms]`` a request at ``now_ms``
    falls in window k = now_ms // window_ms, i.e. [k*window_ms, (k+1)*window_ms).

    Allowed when, in every limit, the units counted in the current window plus ``cost`` fit in
    ``limit``.  A limit that says no frees up at the start of its next window.

    Cost: one EVAL on one hash holding, per limit, its window number and its count
    (HMGET, then HSET of every limit only when allowed) + PEXPIRE to the end of the latest
    current window.  O(number of limits).
    """
    script = """
    local seen, fits, wait, keep = {}, nil, 0, 0
    for i, pair in ipairs(limits) do
      local cap, span = pair[1], pair[2]
      local k = math.floor(now / span)
      local till_next = (k + 1) * span - now
      local got = redis.call('HMGET', KEYS[1], 'k' .. i, 'used' .. i)
      local used = (tonumber(got[1]) == k) and tonumber(got[2]) or 0
      seen[i] = {k, used}
      local room = math.max(0, cap - used)
      if fits == nil or room < fits then fits = room end
      if used + cost > cap and till_next > wait then wait = till_next end
      if till_next > keep then keep = till_next end
    end
    if wait > 0 then return {0, fits, wait} end
    for i, s in ipairs(seen) do
      redis.call('HSET', KEYS[1], 'k' .. i, s[1], 'used' .. i, s[2] + cost)
    end
    redis.call('PEXPIRE', KEYS[1], keep)
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "fixed", client_id), limits, cost, now_ms)


def sliding_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """Sliding windows over one log: for ``[limit, window_ms]`` a unit allowed at time t counts
    against every request at a time now with t <= now < t + window_ms (at exactly t + window_ms
    it no longer counts).

    Allowed when, in every limit, the units of the last ``window_ms`` plus ``cost`` fit in
    ``limit``.  Record allowed units only, one log entry per unit.  A limit that says no frees
    up when enough of its oldest units have left its window.

    Cost: one EVAL on one sorted set (score = time, member = a unique id per unit) shared by all
    the limits: ZREMRANGEBYSCORE (what left the longest window) + ZCARD + ZCOUNT and, when denied,
    ZRANGE per limit + ``cost`` ZADDs + PEXPIRE; O(limits * log N + cost), memory O(largest limit).
    """
    script = """
    local longest = 0
    for _, pair in ipairs(limits) do longest = math.max(longest, pair[2]) end
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest)
    local logged = redis.call('ZCARD', KEYS[1])
    local fits, wait = nil, 0
    for _, pair in ipairs(limits) do
      local cap, span = pair[1], pair[2]
      local recent = redis.call('ZCOUNT', KEYS[1], now - span + 1, '+inf')
      local room = math.max(0, cap - recent)
      if fits == nil or room < fits then fits = room end
      if recent + cost > cap then
        -- the window holds the newest `recent` entries; its oldest (recent + cost - cap) must go
        local at = logged + cost - cap - 1
        local entry = redis.call('ZRANGE', KEYS[1], at, at, 'WITHSCORES')
        wait = math.max(wait, tonumber(entry[2]) + span - now)
      end
    end
    if wait > 0 then return {0, fits, wait} end
    for unit = 1, cost do redis.call('ZADD', KEYS[1], now, request_id .. ':' .. unit) end
    redis.call('PEXPIRE', KEYS[1], longest)
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "log", client_id), limits, cost, now_ms)


def token_bucket(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """One bucket per limit: for ``[limit, window_ms]`` a bucket of ``limit`` tokens, full at first,
    refilled continuously at ``limit`` tokens per ``window_ms``.

    Allowed when every bucket holds at least ``cost`` tokens; then each loses ``cost``.  Refill is
    continuous: after ``window_ms / limit`` ms one token has come back, after half of that half a
    token (keep the fraction).  ``remaining`` counts whole tokens; when denied, a bucket that is
    short is ready when it holds ``cost`` tokens again, rounded up to a whole ms.

    Cost: one EVAL on one hash (the time of the last update and every bucket's level): HMGET
    (or one HGET per field), then HSET only when allowed + PEXPIRE until the slowest bucket would
    be full again.  O(number of limits).
    """
    # a bucket's level is stored in tokens * window: one token = `span` units and `cap` units
    # come back per ms, so the arithmetic stays in exact integers
    script = """
    local last = tonumber(redis.call('HGET', KEYS[1], 'at')) or now
    local since = math.max(0, now - last)
    local level, fits, wait = {}, nil, 0
    for i, pair in ipairs(limits) do
      local cap, span = pair[1], pair[2]
      local stored = tonumber(redis.call('HGET', KEYS[1], 'lvl' .. i)) or cap * span
      level[i] = math.min(cap * span, stored + since * cap)
      local whole = math.floor(level[i] / span)
      if fits == nil or whole < fits then fits = whole end
      local short = cost * span - level[i]
      if short > 0 then wait = math.max(wait, math.ceil(short / cap)) end
    end
    if wait > 0 then return {0, fits, wait} end
    local refilled = 0
    redis.call('HSET', KEYS[1], 'at', math.max(now, last))
    for i, pair in ipairs(limits) do
      local left = level[i] - cost * pair[2]
      redis.call('HSET', KEYS[1], 'lvl' .. i, left)
      refilled = math.max(refilled, math.ceil((pair[1] * pair[2] - left) / pair[1]))
    end
    redis.call('PEXPIRE', KEYS[1], refilled)
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "bucket", client_id), limits, cost, now_ms)
