"""Lab 04: three rate limiters that weigh requests and check several limits in one decision.

The lesson's limiters check one limit and count every request as 1.  Real APIs need more: a
request may cost several units (a batch of 5 messages, an expensive search), and one client usually
has several limits at once (10 per second *and* 100 per minute).  Here every function takes::

    limits = [[10, 1000], [100, 60000]]   # [limit, window_ms] pairs: 10 per second AND 100 per minute
    cost = 3                              # this request takes 3 units from every limit

and answers with a dict::

    {"allowed": True, "remaining": 4, "retry_after_ms": 0}

* ``allowed``: True only if *every* limit has room for ``cost`` more units.  Then ``cost`` is
  counted in every limit; when any limit says no, nothing is counted anywhere (all or nothing).
* ``remaining``: how many units could still be taken right now, after this decision, in the
  tightest limit (the smallest of them; never below 0).  A denied request took nothing, so it is
  what was already there.
* ``retry_after_ms``: 0 when allowed; otherwise the exact number of milliseconds after ``now_ms``
  at which the same request (same ``cost``) would be allowed, if nothing else happens meanwhile:
  the longest wait among the limits that say no.

``now_ms`` is the time in milliseconds.  Tests pass it (a controlled clock); when it is None, read
the Redis server's clock with ``TIME`` inside your script, never the application's clock.

Keys: one key per client and limiter, holding the state of all its limits, built with ``r.key(...)``
(for example ``r.key("rl", "fixed", client_id)``); touch no other key.  Every key you write gets its
TTL in milliseconds (PEXPIRE), in the same script, on every write: as long as its state still
matters, counted from the moment the script runs (until the latest current window ends, until the
last logged unit leaves the longest window, until every bucket is full again), never longer than
the longest window.  Keys expire on the server's real clock, which a controlled clock does not move:
when ``now_ms`` is given, add the lesson's slack of 60,000 ms, so that a key never vanishes while
the controlled clock still needs it (the prelude below sets ``slack`` for you).

Up to 16 processes call these functions at the same time for the same client: read-decide-write
in Python between two round trips is not safe, put the whole decision in one script.
"""
import hashlib
import secrets

from redis.exceptions import NoScriptError

_PRELUDE = """
local now, slack = tonumber(ARGV[1]), 60000
if not now then
  local t = redis.call('TIME')
  now, slack = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), 0
end
local cost, request_id = tonumber(ARGV[2]), ARGV[3]
local limits = {}   -- limits[i] = {limit, window}, in the order the caller gave them
for i = 4, #ARGV, 2 do limits[#limits + 1] = {tonumber(ARGV[i]), tonumber(ARGV[i + 1])} end
"""  # every script starts like this: now (ms), slack (ms), cost, request_id (unique per call) and limits


_SHA: dict[str, str] = {}  # script -> SHA1 of _PRELUDE + script, computed on its first call only


def _decide(r, script: str, key: str, limits, cost: int, now_ms) -> dict:
    """Run ``_PRELUDE + script`` on ``key``; the script returns {allowed, remaining, retry}.

    Checks the arguments first: at least one ``[limit, window_ms]`` pair, all at least 1, and
    1 <= cost <= every limit (a bigger request could never be allowed).  Sends EVALSHA (the
    server runs its cached copy; the script's SHA1 is computed once per script) and loads the
    script with SCRIPT LOAD the first time a server does not know it.
    """
    pairs = [(int(limit), int(window_ms)) for limit, window_ms in limits]
    if not pairs or any(limit < 1 or window_ms < 1 for limit, window_ms in pairs):
        raise ValueError("limits must be a non-empty list of [limit, window_ms] pairs, all at least 1")
    if not 1 <= int(cost) <= min(limit for limit, _ in pairs):
        raise ValueError("cost must be at least 1 and at most the smallest limit")
    now = "" if now_ms is None else int(now_ms)
    args = [now, int(cost), secrets.token_hex(8)] + [n for pair in pairs for n in pair]
    sha = _SHA.get(script)
    if sha is None:
        sha = _SHA[script] = hashlib.sha1((_PRELUDE + script).encode()).hexdigest()
    try:
        allowed, remaining, retry = r.evalsha(sha, 1, key, *args)
    except NoScriptError:
        r.script_load(_PRELUDE + script)
        allowed, remaining, retry = r.evalsha(sha, 1, key, *args)
    return {"allowed": allowed == 1, "remaining": remaining, "retry_after_ms": retry}


def fixed_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    """Fixed windows on the clock, one per limit: for ``[limit, window_ms]`` a request at ``now_ms``
    falls in window k = now_ms // window_ms, i.e. [k*window_ms, (k+1)*window_ms).

    Allowed when, in every limit, the units counted in the current window plus ``cost`` fit in
    ``limit``.  A limit that says no frees up at the start of its next window.

    Cost: one EVALSHA on one hash holding, per limit, its window number and its count
    (HMGET, then HSET of every limit only when allowed) + PEXPIRE to the end of the latest
    current window.  O(number of limits).
    """
    # BEGIN SOLUTION
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
    return _decide(r, script, r.key("rl", "fixed", client_id), limits, cost, now_ms)
    # END SOLUTION


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
    # BEGIN SOLUTION
    # the longest window's count is the log's size once it is trimmed; the units go in one ZADD
    # (in chunks of 1,000 units, far below what Lua's unpack() can take)
    script = """
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
    redis.call('PEXPIRE', KEYS[1], longest + slack)
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "log", client_id), limits, cost, now_ms)
    # END SOLUTION


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
    # BEGIN SOLUTION
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
    redis.call('PEXPIRE', KEYS[1], refilled + slack)
    return {1, fits - cost, 0}
    """
    return _decide(r, script, r.key("rl", "bucket", client_id), limits, cost, now_ms)
    # END SOLUTION
