"""The fixed window keeps one key for every client, so clients use up each other's limit."""


def fixed_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """Fixed windows on the clock, one per limit: for ``[limit, window_ms]`` a request at ``now_ms``
    falls in window k = now_ms // window_ms, i.e. [k*window_ms, (k+1)*window_ms).

    Allowed when, in every limit, the units counted in the current window plus ``cost`` fit in
    ``limit``.  A limit that says no frees up at the start of its next window.

    Cost: one EVALSHA on one hash holding, per limit, its window number and its count
    (HMGET, then HSET of every limit only when allowed) + PEXPIRE to the end of the latest
    current window.  O(number of limits).
    """
    # one HMGET and one HSET for all the limits (fields k<i>, used<i>): four calls however many limits
    script = """
    local fields = {}
    for i = 1, #limits do fields[2 * i - 1], fields[2 * i] = 'k' .. i, 'used' .. i end
    local got = redis.call('HMGET', KEYS[1], unpack(fields))
    local new, fits, wait, keep = {}, nil, 0, 0
    for i, pair in ipairs(limits) do
      local cap, span = pair[1], pair[2]
      local start = now - now % span
      local k, till_next = start / span, start + span - now
      local used = (tonumber(got[2 * i - 1]) == k) and tonumber(got[2 * i]) or 0
      new[4 * i - 3], new[4 * i - 2], new[4 * i - 1], new[4 * i] = fields[2 * i - 1], k, fields[2 * i], used + cost
      local room = math.max(0, cap - used)
      if fits == nil or room < fits then fits = room end
      if used + cost > cap and till_next > wait then wait = till_next end
      if till_next > keep then keep = till_next end
    end
    if wait > 0 then return {0, fits, wait} end
    redis.call('HSET', KEYS[1], unpack(new))
    redis.call('PEXPIRE', KEYS[1], keep + slack)
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "fixed"), limits, cost, now_ms)
