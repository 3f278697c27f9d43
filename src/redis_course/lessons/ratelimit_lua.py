"""Lesson 04: the seven limiters to use, each one Lua script on one key (re-exported by ``ratelimit``).

Every limiter is one ``EVALSHA`` (one round trip, atomic), keeps its state under one key that always
has a TTL, and answers a :class:`Decision`: allowed or not, how many requests remain, in how many
milliseconds to retry and when the quota is full again.  The clock is the server's (``TIME`` inside
the script) unless ``now_ms`` is given: a controllable clock for demonstrations and tests.

What a decision costs the server is mostly how many commands the script calls (each ``redis.call``
costs about as much as the command itself) and what it writes, so the scripts call as few as they
can: a denied request only reads; a state that is one number (or two numbers that fit in one) is a
string written by ``INCR`` or ``SET ... PX`` instead of a hash and a ``PEXPIRE``; a TTL is set when a
window opens, not on every request.  Arithmetic stays in integers.  On the client, each script's
SHA1 is computed once, at import: a call is one ``EVALSHA`` with no hashing and no lookup.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from itertools import count
from typing import Callable, NamedTuple

from redis.exceptions import NoScriptError

from ..l10n import N_

LIMIT = 10  # ten requests ...
WINDOW_MS = 1000  # ... per second, per IP address, as in the INCR documentation


class Decision(NamedTuple):
    """What a limiter answers: everything an HTTP 429 and the RateLimit header fields need."""

    allowed: bool
    remaining: int  # requests still allowed now (0 when denied)
    retry_after_ms: int  # 0 when allowed; else how long until a request can be allowed
    reset_after_ms: int  # how long until the limiter is back to its full quota


#: The clock of every script of the course that takes a time (these limiters, lesson 07's semaphore):
#: ``now`` in ms from ARGV[1], or from the server's TIME when ARGV[1] is '', and ``slack``, the
#: extra TTL that keys get under a controlled clock.  Each script adds its own ARGV after it.
# --8<-- [start:clock]
CLOCK_LUA = """
-- ARGV[1]: now in ms (a controlled clock) or '' for the server's clock (TIME)
local now, slack = ARGV[1], 60000
if now == '' then
  local t = redis.call('TIME')
  now, slack = t[1] * 1000 + math.floor(t[2] / 1000), 0
else
  now = now + 0
end
-- slack: keys expire on the server's real clock; under a controlled clock they get a minute more,
-- so a key never vanishes while the controlled clock still needs it (decisions never rely on expiry)
"""
# --8<-- [end:clock]

_CLOCK = (
    CLOCK_LUA
    + """-- ARGV[2]: limit, ARGV[3]: window in ms
local limit, window = ARGV[2] + 0, ARGV[3] + 0
"""
)

FIXED_WINDOW_LUA = (
    _CLOCK
    + """
-- KEYS[1]: one integer, w * (limit + 1) + n: the number w of the current window and the n requests
-- allowed in it.  INCR counts one more and keeps the TTL set when the window opened.
local start = now - now % window                -- when the current window opened
local reset = start + window - now
local base = start / window * (limit + 1)        -- w * (limit + 1): n = 0 in this window
local v = (redis.call('GET', KEYS[1]) or 0) + 0
if v > base and v <= base + limit then
  if v == base + limit then return {0, 0, reset, reset} end
  v = redis.call('INCR', KEYS[1])
else
  v = base + 1                                   -- a new window: one request, expires at its end
  redis.call('SET', KEYS[1], v, 'PX', reset + slack)
end
return {1, base + limit - v, 0, reset}
"""
)

FIRST_HIT_WINDOW_LUA = (
    _CLOCK
    + """
-- KEYS[1]: hash {s = when the window opened (its first request), n = requests allowed in it}
local h = redis.call('HMGET', KEYS[1], 's', 'n')
local s = h[1] and h[1] + 0
if s and now >= s and now < s + window then
  local reset = s + window - now
  if h[2] + 0 >= limit then return {0, 0, reset, reset} end
  local n = redis.call('HINCRBY', KEYS[1], 'n', '1')   -- the TTL was set when the window opened
  return {1, limit - n, 0, reset}
end
redis.call('HSET', KEYS[1], 's', now, 'n', '1')       -- this request opens a new window
redis.call('PEXPIRE', KEYS[1], window + slack)
return {1, limit - 1, 0, window}
"""
)

LIST_WINDOW_LUA = (
    _CLOCK
    + """
-- KEYS[1]: list of the times requests were allowed; its head is when the window opened
local head, n = redis.call('LINDEX', KEYS[1], 0), 0
if head then
  head = head + 0
  if now >= head + window or now < head then
    redis.call('DEL', KEYS[1])                   -- that window is over
    head = nil
  else
    n = redis.call('LLEN', KEYS[1])
    if n >= limit then
      local reset = head + window - now
      return {0, 0, reset, reset}
    end
  end
end
redis.call('RPUSH', KEYS[1], now)
if head then return {1, limit - n - 1, 0, head + window - now} end
redis.call('PEXPIRE', KEYS[1], window + slack)   -- a new window: its TTL, set once
return {1, limit - 1, 0, window}
"""
)

SLIDING_LOG_LUA = (
    _CLOCK
    + """
-- KEYS[1]: sorted set, member = a unique request id (ARGV[4]), score = when it was allowed
local cut = now - window                          -- entries at or before it have left the window
local n = redis.call('ZCOUNT', KEYS[1], cut + 1, '+inf')        -- scores are whole ms
if n >= limit then
  -- the limit-th newest entry has to leave the window before a request fits
  local oldest = redis.call('ZRANGE', KEYS[1], -limit, -limit, 'WITHSCORES')
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, 0, oldest[2] - cut, newest[2] - cut}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cut)
redis.call('PEXPIRE', KEYS[1], window + slack)
return {1, limit - n - 1, 0, window}
"""
)

SLIDING_WINDOW_COUNTER_LUA = (
    _CLOCK
    + """
-- KEYS[1]: hash {w = number of the current fixed window, cur = its count, prev = the previous one's}
-- Estimate for the last `window` ms: prev * (part of the previous window still inside) + cur.
-- Everything is multiplied by `window` so the arithmetic stays in integers.
local e = now % window                           -- ms elapsed in the current fixed window
local w = (now - e) / window
local h = redis.call('HMGET', KEYS[1], 'w', 'cur', 'prev')
local hw, cur, prev = (h[1] or -2) + 0, (h[2] or 0) + 0, (h[3] or 0) + 0
if hw ~= w then
  if hw == w - 1 then prev = cur else prev = 0 end
  cur = 0
end
local reset = 2 * window - e                     -- until the current window stops counting
local room = (limit - 1 - cur) * window          -- how much weighted prev still fits
if prev * (window - e) > room then
  local retry
  if room >= 0 then
    retry = window - math.floor(room / prev) - e
  else                                           -- wait for the next window: cur becomes prev
    local e2 = window - math.floor((limit - 1) * window / cur)
    if e2 < 0 then e2 = 0 end
    retry = window - e + e2
  end
  return {0, 0, retry, reset}
end
cur = cur + 1
if hw == w then
  redis.call('HINCRBY', KEYS[1], 'cur', '1')        -- the TTL was set when this window opened
else
  redis.call('HSET', KEYS[1], 'w', w, 'cur', cur, 'prev', prev)
  redis.call('PEXPIRE', KEYS[1], reset + slack)
end
local left = limit * window - prev * (window - e) - cur * window
return {1, (left - left % window) / window, 0, reset}
"""
)

TOKEN_BUCKET_LUA = (
    _CLOCK
    + """
-- KEYS[1]: a string 'tokens time': the tokens, and when they were counted.  The bucket holds
-- `limit` tokens and gets `limit` tokens per `window` ms.  Tokens are stored multiplied by `window`
-- (one token = `window` units, `limit` units per ms) so the arithmetic stays in integers.
local full = limit * window
local t, ts = string.match(redis.call('GET', KEYS[1]) or '', '(%d+) (%d+)')
if t then
  t, ts = t + 0, ts + 0
  if now > ts then
    t = t + (now - ts) * limit
    if t > full then t = full end
    ts = now
  end
else
  t, ts = full, now
end
if t < window then
  return {0, 0, math.ceil((window - t) / limit), math.ceil((full - t) / limit)}
end
t = t - window
local reset = math.ceil((full - t) / limit)      -- when the bucket is full again
redis.call('SET', KEYS[1], string.format('%d %d', t, ts), 'PX', reset + slack)
return {1, (t - t % window) / window, 0, reset}
"""
)

# --8<-- [start:gcra]
GCRA_LUA = (
    _CLOCK
    + """
-- KEYS[1]: the theoretical arrival time (TAT) of the next request, in microseconds.
-- Requests are spaced `interval` apart at the sustained rate; a burst may run `burst` ahead.
local interval = window * 1000
interval = (interval - interval % limit) / limit
local burst = interval * limit
local now_us = now * 1000
local tat = (redis.call('GET', KEYS[1]) or 0) + 0
if tat < now_us then tat = now_us end
local new_tat = tat + interval
local allow_at = new_tat - burst
if now_us < allow_at then
  return {0, 0, math.ceil((allow_at - now_us) / 1000), math.ceil((tat - now_us) / 1000)}
end
local reset = math.ceil((new_tat - now_us) / 1000)
redis.call('SET', KEYS[1], new_tat, 'PX', reset + slack)
local ahead = now_us - allow_at
return {1, (ahead - ahead % interval) / interval, 0, reset}
"""
)
# --8<-- [end:gcra]


class Script:
    """A Lua script called by EVALSHA, its SHA1 computed once: no hashing and no lookup per call.

    The first call on a server that has not seen the script gets NOSCRIPT; then the script is
    loaded (SCRIPT LOAD) and the call repeated, once.
    """

    __slots__ = ("text", "sha")

    def __init__(self, text: str) -> None:
        self.text = text
        self.sha = hashlib.sha1(text.encode()).hexdigest()

    def __call__(self, r, key: str, *args):
        try:
            return r.execute_command("EVALSHA", self.sha, 1, key, *args)
        except NoScriptError:
            r.script_load(self.text)
            return r.execute_command("EVALSHA", self.sha, 1, key, *args)


_request_ids = count()
_process_tag = secrets.token_hex(4)  # request ids: a random tag per process, then a counter


def _new_process_tag() -> None:
    global _process_tag
    _process_tag = secrets.token_hex(4)


os.register_at_fork(after_in_child=_new_process_tag)  # a forked child must not repeat its parent's ids


def _request_id() -> str:
    """A sliding-log member: unique across processes and hosts, cheaper than os.urandom per request."""
    return f"{_process_tag}{next(_request_ids):x}"


#: The fixed window packs w * (limit + 1) + n in one integer, exact while it stays under 2**53 (the
#: integers a Lua number holds exactly) for any time before 2**43 ms (the year 2248).
_PACKED_MAX = 1 << 53
_TIME_MAX = 1 << 43


def _args(limit: int, window_ms: int, now_ms: int | None) -> tuple:
    if limit < 1 or window_ms < 1:
        raise ValueError("limit and window_ms must be at least 1")
    if now_ms is None:
        return "", limit, window_ms
    if not 0 <= now_ms < _TIME_MAX:
        raise ValueError("now_ms must be a time in ms between 0 and 2**43 (the year 2248)")
    return int(now_ms), limit, window_ms


_FIXED, _FIRST, _LIST, _LOG, _SWC, _BUCKET, _GCRA = (
    Script(FIXED_WINDOW_LUA),
    Script(FIRST_HIT_WINDOW_LUA),
    Script(LIST_WINDOW_LUA),
    Script(SLIDING_LOG_LUA),
    Script(SLIDING_WINDOW_COUNTER_LUA),
    Script(TOKEN_BUCKET_LUA),
    Script(GCRA_LUA),
)


def fixed_window(
    r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None
) -> Decision:
    """Fixed window on the clock (rate limiter 1, fixed): windows are [k*window, (k+1)*window).

    One EVALSHA on one string holding w * (limit + 1) + n: GET + INCR (SET PX when a window opens;
    a denied request only reads), O(1).  Server clock (TIME) unless ``now_ms``.  Allows up to
    2*limit in a short burst across a window boundary.  limit + 1 must be at most 1024 per ms of
    window (about a million per second), so the packed number stays exact.
    """
    if (limit + 1) * (_TIME_MAX // max(window_ms, 1) + 1) > _PACKED_MAX:
        raise ValueError("a fixed window counts at most 1023 requests per ms of window")
    allowed, remaining, retry, reset = _FIXED(r, r.key("rl", "fixed", client_id), *_args(limit, window_ms, now_ms))
    return Decision(allowed == 1, remaining, retry, reset)


def first_hit_window(
    r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None
) -> Decision:
    """A window that opens with its first request (rate limiter 2 with the Lua fix, clocked).

    One EVALSHA on one hash {s, n}: HMGET + HINCRBY (HSET + PEXPIRE when a window opens), O(1).
    A hash, because the window's start is a timestamp: with the count it does not fit one exact
    number.  Server clock unless ``now_ms``.
    """
    allowed, remaining, retry, reset = _FIRST(r, r.key("rl", "first", client_id), *_args(limit, window_ms, now_ms))
    return Decision(allowed == 1, remaining, retry, reset)


def list_window(
    r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None
) -> Decision:
    """The list limiter in one script: a list of admission times, opened by its first request.

    One EVALSHA: LINDEX + LLEN + RPUSH (DEL, PEXPIRE when a window opens), O(1); memory O(limit).
    Server clock unless ``now_ms``.
    """
    allowed, remaining, retry, reset = _LIST(r, r.key("rl", "list", client_id), *_args(limit, window_ms, now_ms))
    return Decision(allowed == 1, remaining, retry, reset)


def sliding_log(
    r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None
) -> Decision:
    """Sliding log: a sorted set of the times requests were allowed in the last ``window_ms``.

    One EVALSHA: ZCOUNT, then ZADD + ZREMRANGEBYSCORE + PEXPIRE when allowed (2 ZRANGE when denied),
    O(log N + trimmed); memory O(limit).  Exact: never more than ``limit`` in any window.  Denied
    requests are not stored.
    """
    allowed, remaining, retry, reset = _LOG(
        r, r.key("rl", "log", client_id), *_args(limit, window_ms, now_ms), _request_id()
    )
    return Decision(allowed == 1, remaining, retry, reset)


def sliding_window_counter(
    r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None
) -> Decision:
    """Sliding window counter: two fixed windows, the previous one weighted by how much still overlaps.

    One EVALSHA on one hash {w, cur, prev}: HMGET + HINCRBY (HSET + PEXPIRE when a window opens),
    O(1).  An estimate: assumes the previous window's requests were spread evenly.  Server clock
    unless ``now_ms``.
    """
    allowed, remaining, retry, reset = _SWC(r, r.key("rl", "swc", client_id), *_args(limit, window_ms, now_ms))
    return Decision(allowed == 1, remaining, retry, reset)


def token_bucket(
    r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None
) -> Decision:
    """Token bucket: holds ``limit`` tokens, refilled at ``limit`` per ``window_ms``; a request takes one.

    One EVALSHA on one string 'tokens time': GET + SET PX, O(1).  Server clock unless ``now_ms``.
    """
    allowed, remaining, retry, reset = _BUCKET(r, r.key("rl", "bucket", client_id), *_args(limit, window_ms, now_ms))
    return Decision(allowed == 1, remaining, retry, reset)


def gcra(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS, now_ms: int | None = None) -> Decision:
    """GCRA (as redis-cell and go-redis/redis_rate do it): one key holding the theoretical arrival time.

    One EVALSHA: GET + SET PX on one string, O(1).  Behaves as a token bucket of ``limit`` tokens
    refilled at ``limit`` per ``window_ms``, stored as a single number.  Server clock unless ``now_ms``.
    """
    allowed, remaining, retry, reset = _GCRA(r, r.key("rl", "gcra", client_id), *_args(limit, window_ms, now_ms))
    return Decision(allowed == 1, remaining, retry, reset)


for _fn, _script, _kind in [
    (fixed_window, _FIXED, "fixed"),
    (first_hit_window, _FIRST, "first"),
    (list_window, _LIST, "list"),
    (sliding_log, _LOG, "log"),
    (sliding_window_counter, _SWC, "swc"),
    (token_bucket, _BUCKET, "bucket"),
    (gcra, _GCRA, "gcra"),
]:
    _fn.script, _fn.kind = _script, _kind  # type: ignore[attr-defined]

#: The seven limiters the lesson compares, by name.
LIMITERS: dict[str, Callable[..., Decision]] = {
    N_("fixed window"): fixed_window,  # N_: names shown translated (_(name)) in charts and tables
    N_("first-hit window"): first_hit_window,
    N_("list"): list_window,
    N_("sliding log"): sliding_log,
    N_("sliding window counter"): sliding_window_counter,
    N_("token bucket"): token_bucket,
    "GCRA": gcra,
}


def fill(
    r,
    limiter: Callable[..., Decision],
    client_id: str,
    requests: int,
    limit: int,
    window_ms: int = WINDOW_MS,
    now_ms: int | None = None,
) -> str:
    """Send ``requests`` requests through ``limiter`` in one pipeline (one round trip); return its key.

    For measuring memory at a given limit without ``requests`` round trips (the script is loaded
    first, SCRIPT LOAD, so the pipeline never meets NOSCRIPT).
    """
    script: Script = limiter.script  # type: ignore[attr-defined]
    key = r.key("rl", limiter.kind, client_id)  # type: ignore[attr-defined]
    r.script_load(script.text)
    args = _args(limit, window_ms, now_ms)
    pipe = r.pipeline(transaction=False)
    for _ in range(requests):
        extra = (_request_id(),) if limiter is sliding_log else ()
        pipe.execute_command("EVALSHA", script.sha, 1, key, *args, *extra)
    pipe.execute()
    return key
