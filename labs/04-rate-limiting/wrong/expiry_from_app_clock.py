"""Wrong: the sliding log's expiry is an instant computed from time.time() in Python (PEXPIREAT)."""


def sliding_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """Sliding windows over one log: for ``[limit, window_ms]`` a unit allowed at time t counts
    against every request at a time now with t <= now < t + window_ms (at exactly t + window_ms
    it no longer counts).

    Allowed when, in every limit, the units of the last ``window_ms`` plus ``cost`` fit in
    ``limit``.  Record allowed units only, one log entry per unit.  A limit that says no frees
    up when enough of its oldest units have left its window.

    Cost: one EVALSHA on one sorted set (score = time, member = a unique id per unit) shared by all
    the limits: ZREMRANGEBYSCORE (what left the longest window) + ZCARD + ZCOUNT and, when denied,
    ZRANGE per limit + ZADD of ``cost`` entries + PEXPIRE; O(limits * log N + cost), memory
    O(largest limit).
    """
    # the longest window's count is the log's size once it is trimmed; the units go in one ZADD
    # (in chunks of 1,000 units, far below what Lua's unpack() can take)
    import time

    # the script must know when to expire the key: the application's clock, sent along with the script
    script = """
    local expire_base = %d
    local longest = 0
    for _, pair in ipairs(limits) do longest = math.max(longest, pair[2]) end
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest)
    local logged = redis.call('ZCARD', KEYS[1])
    local fits, wait = nil, 0
    for _, pair in ipairs(limits) do
      local cap, span = pair[1], pair[2]
      local recent = logged
      if span < longest then recent = redis.call('ZCOUNT', KEYS[1], now - span + 1, '+inf') end
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
    for first = 1, cost, 1000 do
      local add = {}
      for unit = first, math.min(cost, first + 999) do
        add[#add + 1], add[#add + 2] = now, request_id .. ':' .. unit
      end
      redis.call('ZADD', KEYS[1], unpack(add))
    end
    redis.call('PEXPIREAT', KEYS[1], expire_base + longest + slack)
    return {1, fits - cost, 0}
    """ % int(time.time() * 1000)
    return _decide(r, script, r.key("rl", "log", client_id), limits, cost, now_ms)
