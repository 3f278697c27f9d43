"""The token bucket's hash is written without a TTL."""


def token_bucket(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """One bucket per limit: for ``[limit, window_ms]`` a bucket of ``limit`` tokens, full at first,
    refilled continuously at ``limit`` tokens per ``window_ms``.

    Allowed when every bucket holds at least ``cost`` tokens; then each loses ``cost``.  Refill is
    continuous: after ``window_ms / limit`` ms one token has come back, after half of that half a
    token (keep the fraction).  ``remaining`` counts whole tokens; when denied, a bucket that is
    short is ready when it holds ``cost`` tokens again, rounded up to a whole ms.

    Cost: one EVALSHA on one hash (the time of the last update and every bucket's level): HMGET,
    then HSET only when allowed + PEXPIRE until the slowest bucket would be full again.
    O(number of limits).
    """
    # a bucket's level is stored in tokens * window: one token = `span` units and `cap` units
    # come back per ms, so the arithmetic stays in exact integers.  One HMGET and one HSET for
    # the time and every level: four calls however many limits
    script = """
    local fields = {'at'}
    for i = 1, #limits do fields[i + 1] = 'lvl' .. i end
    local got = redis.call('HMGET', KEYS[1], unpack(fields))
    local last = tonumber(got[1]) or now
    local since = math.max(0, now - last)
    local level, fits, wait = {}, nil, 0
    for i, pair in ipairs(limits) do
      local cap, span = pair[1], pair[2]
      local stored = tonumber(got[i + 1]) or cap * span
      level[i] = math.min(cap * span, stored + since * cap)
      local whole = math.floor(level[i] / span)
      if fits == nil or whole < fits then fits = whole end
      local short = cost * span - level[i]
      if short > 0 then wait = math.max(wait, math.ceil(short / cap)) end
    end
    if wait > 0 then return {0, fits, wait} end
    local new, refilled = {'at', math.max(now, last)}, 0
    for i, pair in ipairs(limits) do
      local left = level[i] - cost * pair[2]
      new[2 * i + 1], new[2 * i + 2] = fields[i + 1], left
      refilled = math.max(refilled, math.ceil((pair[1] * pair[2] - left) / pair[1]))
    end
    redis.call('HSET', KEYS[1], unpack(new))
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "bucket", client_id), limits, cost, now_ms)
