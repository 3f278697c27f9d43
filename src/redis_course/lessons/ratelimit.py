"""Lesson 04: rate limiters on Redis, the published ones and the ones to use.

Two groups live here.

**The published limiters, faithfully** (the INCR reference's "rate limiter 1", "rate limiter 2" and
the list limiter).  They are written as *step functions*: generators that send one Redis command
per step and ``yield`` a line saying what it answered, so a lesson can run two clients step by step
in any interleaving (:func:`interleave`), or stop a client for good between two steps, which is what
a crash does.  :func:`run` runs one to the end and returns whether the request was allowed.

**The limiters to use**: :func:`fixed_window`, :func:`first_hit_window`, :func:`list_window`,
:func:`sliding_log`, :func:`sliding_window_counter`, :func:`token_bucket` and :func:`gcra`.  Each is
one Lua script (EVALSHA, one round trip, atomic), keeps all its state under one key that always has
a TTL, and answers a :class:`Decision`: allowed or not, how many requests remain, and in how many
milliseconds to retry.  The clock is the server's (``TIME`` inside the script) unless ``now_ms`` is
given: a controllable clock for deterministic demonstrations and tests.
"""
from __future__ import annotations

import math
import os
import secrets
import threading
import time
from contextlib import contextmanager
from itertools import count
from typing import Callable, Generator, Iterable, Iterator, NamedTuple

LIMIT = 10        # ten requests ...
WINDOW_MS = 1000  # ... per second, per IP address, as in the INCR documentation


# ====================================================================== the published limiters

Steps = Generator[str, None, bool]


def limiter1_get_then_multi(r, ip: str, now: float | None = None, limit: int = LIMIT) -> Steps:
    """Rate limiter 1 as the English text publishes it: GET first, then MULTI/INCR/EXPIRE/EXEC.

    A key per IP per second (``ip:ts``).  Two round trips (GET, then the transaction); the check
    reads a value that other clients may change before our INCR.  ``now`` is the *client's* clock
    in seconds (the published code calls CURRENT_UNIX_TIME() on the application server).
    """
    ts = int(time.time() if now is None else now)
    key = r.key(ip, ts)
    current = r.get(key)
    yield f"GET {r.unprefixed(key)} -> {current!r}"
    if current is not None and int(current) > limit:
        return False
    pipe = r.pipeline(transaction=True)           # MULTI ... EXEC: one round trip
    pipe.incr(key)
    pipe.expire(key, 10)
    value, _ = pipe.execute()
    yield f"MULTI INCR EXPIRE EXEC -> {value}"
    return True


def limiter1_multi_then_check(r, ip: str, now: float | None = None, limit: int = LIMIT) -> Steps:
    """Rate limiter 1 as the Russian text (and redis.io today) publishes it: MULTI first, then check.

    INCR and EXPIRE 10 inside MULTI/EXEC (one round trip), then the decision is made on the value
    INCR returned, which no other client can have seen: exactly ``limit`` requests get in.
    """
    ts = int(time.time() if now is None else now)
    key = r.key(ip, ts)
    pipe = r.pipeline(transaction=True)
    pipe.incr(key)
    pipe.expire(key, 10)
    current, _ = pipe.execute()
    yield f"MULTI INCR EXPIRE EXEC -> {current}"
    return current <= limit


def limiter2(r, ip: str, limit: int = LIMIT) -> Steps:
    """Rate limiter 2 as published: one counter per IP; EXPIRE 1 only when INCR returned 1.

    Up to three round trips (GET, INCR, EXPIRE).  If the client stops after INCR returned 1 and
    before EXPIRE, the key has no TTL: it counts for ever and, past ``limit``, blocks the IP for ever.
    """
    key = r.key(ip)
    current = r.get(key)
    yield f"GET {r.unprefixed(key)} -> {current!r}"
    if current is not None and int(current) > limit:
        return False
    value = r.incr(key)
    yield f"INCR {r.unprefixed(key)} -> {value}"
    if value == 1:
        r.expire(key, 1)
        yield f"EXPIRE {r.unprefixed(key)} 1"
    return True


#: The documentation's fix for rate limiter 2: INCR and the optional EXPIRE in one script.
LIMITER2_LUA = """
local current
current = redis.call("incr", KEYS[1])
if current == 1 then
    redis.call("expire", KEYS[1], 1)
end
return current
"""


def limiter2_lua(r, ip: str, limit: int = LIMIT) -> Steps:
    """Rate limiter 2 fixed as the documentation says: one EVALSHA runs INCR and EXPIRE together.

    One round trip; the script runs atomically, so no client can stop between INCR and EXPIRE.
    The decision is made on the value the script returns (``> limit`` is denied).
    """
    key = r.key(ip)
    current = _script(r, "limiter2", LIMITER2_LUA)(keys=[key])
    yield f"EVALSHA <limiter2> 1 {r.unprefixed(key)} -> {current}"
    return current <= limit


def list_limiter(r, ip: str, limit: int = LIMIT) -> Steps:
    """The list-based limiter as published: LLEN; EXISTS; MULTI(RPUSH, EXPIRE 1) or RPUSHX.

    Three round trips.  RPUSH and EXPIRE are in one transaction, and RPUSHX never creates a key,
    so the list cannot be left without a TTL.  The race the text mentions (EXISTS says no, another
    client creates the list first) only resets the TTL; a list that expires between EXISTS and
    RPUSHX makes RPUSHX do nothing, so that request is not counted.
    """
    key = r.key(ip)
    current = r.llen(key)
    yield f"LLEN {r.unprefixed(key)} -> {current}"
    if current > limit:
        return False
    exists = r.exists(key)
    yield f"EXISTS {r.unprefixed(key)} -> {exists}"
    if not exists:
        pipe = r.pipeline(transaction=True)
        pipe.rpush(key, ip)
        pipe.expire(key, 1)
        length, _ = pipe.execute()
        yield f"MULTI RPUSH EXPIRE EXEC -> {length}"
    else:
        length = r.rpushx(key, ip)
        yield f"RPUSHX {r.unprefixed(key)} -> {length}"
    return True


def run(steps: Steps) -> bool:
    """Run a step function to the end; return its decision (True: allowed)."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def interleave(clients: dict[str, Steps], order: str, out: Callable[[str], None] = print) -> dict[str, bool | None]:
    """Advance the named clients one step at a time in ``order`` (e.g. ``"ABAB"``), printing each step.

    A client that is not finished when ``order`` ends is stopped where it is (as if it crashed);
    its decision is None.  Returns every client's decision.
    """
    decisions: dict[str, bool | None] = {name: None for name in clients}
    for name in order:
        try:
            out(f"{name}: {next(clients[name])}")
        except StopIteration as done:
            decisions[name] = done.value
            out(f"{name}: {'allowed' if done.value else 'denied'}")
    for name, steps in clients.items():
        steps.close()
    return decisions


# ====================================================================== the limiters to use

class Decision(NamedTuple):
    """What a limiter answers: everything an HTTP 429 and the RateLimit header fields need."""

    allowed: bool
    remaining: int        # requests still allowed now (0 when denied)
    retry_after_ms: int   # 0 when allowed; else how long until a request can be allowed
    reset_after_ms: int   # how long until the limiter is back to its full quota

    def as_dict(self) -> dict:
        return self._asdict()


_CLOCK = """
-- ARGV[1]: now in ms (a controlled clock) or '' for the server's clock
local now, slack = tonumber(ARGV[1]), 60000
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  slack = 0
end
-- slack: keys expire on the server's real clock; under a controlled clock they get a minute more,
-- so a key never vanishes while the controlled clock still needs it (decisions never rely on expiry)
local limit, window = tonumber(ARGV[2]), tonumber(ARGV[3])
"""

FIXED_WINDOW_LUA = _CLOCK + """
-- KEYS[1]: hash {w = number of the current window, n = requests allowed in it}
local w = math.floor(now / window)
local reset = (w + 1) * window - now
local h = redis.call('HMGET', KEYS[1], 'w', 'n')
local n
if tonumber(h[1]) == w then
  if tonumber(h[2]) >= limit then return {0, 0, reset, reset} end
  n = redis.call('HINCRBY', KEYS[1], 'n', 1)        -- the TTL was set when the window opened
else
  n = 1                                             -- a new window: count 1, expire at its end
  redis.call('HSET', KEYS[1], 'w', w, 'n', n)
  redis.call('PEXPIRE', KEYS[1], reset + slack)
end
return {1, limit - n, 0, reset}
"""

FIRST_HIT_WINDOW_LUA = _CLOCK + """
-- KEYS[1]: hash {s = when the window opened (its first request), n = requests allowed in it}
local h = redis.call('HMGET', KEYS[1], 's', 'n')
local s, n = tonumber(h[1]), tonumber(h[2])
if s and now >= s and now < s + window then
  local reset = s + window - now
  if n >= limit then return {0, 0, reset, reset} end
  n = redis.call('HINCRBY', KEYS[1], 'n', 1)        -- the TTL was set when the window opened
  return {1, limit - n, 0, reset}
end
redis.call('HSET', KEYS[1], 's', now, 'n', 1)       -- this request opens a new window
redis.call('PEXPIRE', KEYS[1], window + slack)
return {1, limit - 1, 0, window}
"""

LIST_WINDOW_LUA = _CLOCK + """
-- KEYS[1]: list of the times requests were allowed; its head is when the window opened
local head = tonumber(redis.call('LINDEX', KEYS[1], 0))
if head and (now >= head + window or now < head) then
  redis.call('DEL', KEYS[1])
  head = nil
end
local n = redis.call('LLEN', KEYS[1])
if n >= limit then
  local reset = head + window - now
  return {0, 0, reset, reset}
end
redis.call('RPUSH', KEYS[1], now)
if not head then head = now end
local reset = head + window - now
redis.call('PEXPIRE', KEYS[1], reset + slack)
return {1, limit - n - 1, 0, reset}
"""

SLIDING_LOG_LUA = _CLOCK + """
-- KEYS[1]: sorted set, member = a unique request id (ARGV[4]), score = when it was allowed
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  -- the (n - limit + 1)-th oldest entry has to leave the window before a request fits
  local oldest = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, 0, tonumber(oldest[2]) + window - now, tonumber(newest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window + slack)
return {1, limit - n - 1, 0, window}
"""

SLIDING_WINDOW_COUNTER_LUA = _CLOCK + """
-- KEYS[1]: hash {w = number of the current fixed window, cur = its count, prev = the previous one's}
-- Estimate for the last `window` ms: prev * (part of the previous window still inside) + cur.
-- Everything is multiplied by `window` so the arithmetic stays in integers.
local w = math.floor(now / window)
local e = now - w * window                       -- ms elapsed in the current fixed window
local h = redis.call('HMGET', KEYS[1], 'w', 'cur', 'prev')
local hw, cur, prev = tonumber(h[1]), tonumber(h[2]) or 0, tonumber(h[3]) or 0
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
  redis.call('HINCRBY', KEYS[1], 'cur', 1)          -- the TTL was set when this window opened
else
  redis.call('HSET', KEYS[1], 'w', w, 'cur', cur, 'prev', prev)
  redis.call('PEXPIRE', KEYS[1], reset + slack)
end
local remaining = math.floor((limit * window - prev * (window - e) - cur * window) / window)
return {1, remaining, 0, reset}
"""

TOKEN_BUCKET_LUA = _CLOCK + """
-- KEYS[1]: hash {t = tokens, ts = when they were counted}.  The bucket holds `limit` tokens and
-- gets `limit` tokens per `window` ms.  Tokens are stored multiplied by `window` (one token =
-- `window` units, `limit` units per ms) so the arithmetic stays in integers.
local full = limit * window
local h = redis.call('HMGET', KEYS[1], 't', 'ts')
local t, ts = tonumber(h[1]), tonumber(h[2])
if not t then t = full; ts = now end
if now > ts then
  t = math.min(full, t + (now - ts) * limit)
  ts = now
end
if t < window then
  return {0, 0, math.ceil((window - t) / limit), math.ceil((full - t) / limit)}
end
t = t - window
local reset = math.ceil((full - t) / limit)      -- when the bucket is full again
redis.call('HSET', KEYS[1], 't', t, 'ts', ts)
redis.call('PEXPIRE', KEYS[1], reset + slack)
return {1, math.floor(t / window), 0, reset}
"""

GCRA_LUA = _CLOCK + """
-- KEYS[1]: the theoretical arrival time (TAT) of the next request, in microseconds.
-- Requests are spaced `interval` apart at the sustained rate; a burst may run `burst` ahead.
local interval = math.floor(window * 1000 / limit)
local burst = interval * limit
local now_us = now * 1000
local tat = tonumber(redis.call('GET', KEYS[1])) or now_us
if tat < now_us then tat = now_us end
local new_tat = tat + interval
local allow_at = new_tat - burst
if now_us < allow_at then
  return {0, 0, math.ceil((allow_at - now_us) / 1000), math.ceil((tat - now_us) / 1000)}
end
local reset = math.ceil((new_tat - now_us) / 1000)
redis.call('SET', KEYS[1], new_tat, 'PX', reset + slack)
return {1, math.floor((now_us - allow_at) / interval), 0, reset}
"""

_scripts: dict[str, object] = {}
_request_ids = count()
_process_tag = secrets.token_hex(4)   # request ids: a random tag per process, then a counter


def _new_process_tag() -> None:
    global _process_tag
    _process_tag = secrets.token_hex(4)


os.register_at_fork(after_in_child=_new_process_tag)  # a forked child must not repeat its parent's ids


def _request_id() -> str:
    """A sliding-log member: unique across processes and hosts, cheaper than os.urandom per request."""
    return f"{_process_tag}{next(_request_ids):x}"

_scripts_lock = threading.Lock()


def _registered(r, name: str, text: str):
    """The redis-py Script for ``text``: it sends EVALSHA and falls back to loading the script once."""
    script = _scripts.get(name)
    if script is None:
        with _scripts_lock:
            script = _scripts.setdefault(name, r.register_script(text))
    return script


def _script(r, name: str, text: str):
    """Call the script ``name`` on ``r``: ``_script(r, name, text)(keys=[...], args=[...])``."""
    script = _registered(r, name, text)
    return lambda keys=(), args=(): script(keys=list(keys), args=list(args), client=r)


def _decide(r, name: str, text: str, key: str, now_ms: int | None, limit: int, window_ms: int,
            *extra) -> Decision:
    if limit < 1 or window_ms < 1:
        raise ValueError("limit and window_ms must be at least 1")
    now = "" if now_ms is None else int(now_ms)
    script = _registered(r, name, text)
    allowed, remaining, retry, reset = script(keys=[key], args=[now, limit, window_ms, *extra], client=r)
    return Decision(allowed == 1, remaining, retry, reset)


def fill(r, limiter: Callable[..., Decision], client_id: str, requests: int, limit: int,
         window_ms: int = WINDOW_MS, now_ms: int | None = None) -> str:
    """Send ``requests`` requests through ``limiter`` in one pipeline (one round trip); return its key.

    For measuring memory at a given limit without ``requests`` round trips.
    """
    name, text, kind = limiter.spec  # type: ignore[attr-defined]
    key = r.key("rl", kind, client_id)
    script = _registered(r, name, text)
    pipe = r.pipeline(transaction=False)
    now = "" if now_ms is None else int(now_ms)
    for _ in range(requests):
        extra = [_request_id()] if limiter is sliding_log else []
        script(keys=[key], args=[now, limit, window_ms, *extra], client=pipe)
    pipe.execute()
    return key


def fixed_window(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
                 now_ms: int | None = None) -> Decision:
    """Fixed window on the clock (rate limiter 1, fixed): windows are [k*window, (k+1)*window).

    One EVALSHA: HMGET + HINCRBY (HSET + PEXPIRE when a window opens) on one hash, O(1).  Server
    clock (TIME) unless ``now_ms``.  Allows up to 2*limit in a short burst across a window boundary.
    """
    return _decide(r, "fixed_window", FIXED_WINDOW_LUA, r.key("rl", "fixed", client_id), now_ms, limit, window_ms)


def first_hit_window(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
                     now_ms: int | None = None) -> Decision:
    """A window that opens with its first request (rate limiter 2 with the Lua fix, clocked).

    One EVALSHA: HMGET + HINCRBY (HSET + PEXPIRE when a window opens) on one hash, O(1).  Server
    clock unless ``now_ms``.
    """
    return _decide(r, "first_hit_window", FIRST_HIT_WINDOW_LUA, r.key("rl", "first", client_id), now_ms,
                   limit, window_ms)


def list_window(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
                now_ms: int | None = None) -> Decision:
    """The list limiter in one script: a list of admission times, opened by its first request.

    One EVALSHA: LINDEX + LLEN + RPUSH + PEXPIRE, O(1); memory O(limit).  Server clock unless ``now_ms``.
    """
    return _decide(r, "list_window", LIST_WINDOW_LUA, r.key("rl", "list", client_id), now_ms, limit, window_ms)


def sliding_log(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
                now_ms: int | None = None) -> Decision:
    """Sliding log: a sorted set of the times requests were allowed in the last ``window_ms``.

    One EVALSHA: ZREMRANGEBYSCORE + ZCARD + ZADD + PEXPIRE, O(log N + trimmed); memory O(limit).
    Exact: never more than ``limit`` in any window.  Denied requests are not stored.
    """
    return _decide(r, "sliding_log", SLIDING_LOG_LUA, r.key("rl", "log", client_id), now_ms, limit, window_ms,
                   _request_id())


def sliding_window_counter(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
                           now_ms: int | None = None) -> Decision:
    """Sliding window counter: two fixed windows, the previous one weighted by how much still overlaps.

    One EVALSHA: HMGET + HINCRBY (HSET + PEXPIRE when a window opens) on one hash, O(1).  An
    estimate: assumes the previous window's requests were spread evenly.  Server clock unless ``now_ms``.
    """
    return _decide(r, "sliding_window_counter", SLIDING_WINDOW_COUNTER_LUA, r.key("rl", "swc", client_id), now_ms,
                   limit, window_ms)


def token_bucket(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
                 now_ms: int | None = None) -> Decision:
    """Token bucket: holds ``limit`` tokens, refilled at ``limit`` per ``window_ms``; a request takes one.

    One EVALSHA: HMGET + HSET + PEXPIRE on one hash, O(1).  Server clock unless ``now_ms``.
    """
    return _decide(r, "token_bucket", TOKEN_BUCKET_LUA, r.key("rl", "bucket", client_id), now_ms, limit, window_ms)


def gcra(r, client_id: str, limit: int = LIMIT, window_ms: int = WINDOW_MS,
         now_ms: int | None = None) -> Decision:
    """GCRA (as redis-cell and go-redis/redis_rate do it): one key holding the theoretical arrival time.

    One EVALSHA: GET + SET PX on one string, O(1).  Behaves as a token bucket of ``limit`` tokens
    refilled at ``limit`` per ``window_ms``, stored as a single number.  Server clock unless ``now_ms``.
    """
    return _decide(r, "gcra", GCRA_LUA, r.key("rl", "gcra", client_id), now_ms, limit, window_ms)


for _fn, _text, _kind in [(fixed_window, FIXED_WINDOW_LUA, "fixed"), (first_hit_window, FIRST_HIT_WINDOW_LUA, "first"),
                          (list_window, LIST_WINDOW_LUA, "list"), (sliding_log, SLIDING_LOG_LUA, "log"),
                          (sliding_window_counter, SLIDING_WINDOW_COUNTER_LUA, "swc"),
                          (token_bucket, TOKEN_BUCKET_LUA, "bucket"), (gcra, GCRA_LUA, "gcra")]:
    _fn.spec = (_fn.__name__, _text, _kind)  # type: ignore[attr-defined]

#: The seven limiters the lesson compares, by name.
LIMITERS: dict[str, Callable[..., Decision]] = {
    "fixed window": fixed_window,
    "first-hit window": first_hit_window,
    "list": list_window,
    "sliding log": sliding_log,
    "sliding window counter": sliding_window_counter,
    "token bucket": token_bucket,
    "GCRA": gcra,
}


# ====================================================================== measuring

def bursty_trace() -> list[int]:
    """Request times in ms from 0 for one client: a quiet start, a burst across the 1 s boundary,
    a long overload, a pause and one big burst."""
    times = list(range(0, 900, 100))                       # 9 calm requests
    times += [905 + 6 * i for i in range(15)]              # 15 just before the boundary
    times += [1005 + 6 * i for i in range(15)]             # 15 just after it
    times += list(range(1150, 3000, 50))                   # 20 per second for almost 2 s
    times += [4000] * 25                                   # 25 at the same millisecond
    times += list(range(4500, 6000, 125))                  # then 8 per second
    return times


def replay(r, limiter: Callable[..., Decision], times: Iterable[int], client_id: str,
           start_ms: int = 1_700_000_000_000, limit: int = LIMIT, window_ms: int = WINDOW_MS) -> list[Decision]:
    """Send one request per time in ``times`` (ms from ``start_ms``) through ``limiter``, clock controlled."""
    return [limiter(r, client_id, limit, window_ms, now_ms=start_ms + t) for t in times]


def max_in_any_window(times: list[int], allowed: list[bool], window_ms: int = WINDOW_MS) -> int:
    """The largest number of allowed requests inside any window of ``window_ms`` (half-open)."""
    got = [t for t, ok in zip(times, allowed) if ok]
    best, j = 0, 0
    for i, t in enumerate(got):
        while got[j] <= t - window_ms:
            j += 1
        best = max(best, i - j + 1)
    return best


@contextmanager
def count_round_trips() -> Iterator[dict]:
    """Count round trips (writes of one packed request to a connection) while the block runs.

    A pipeline or MULTI/EXEC sends all its commands at once: one round trip.  Not thread-safe.
    """
    from redis.connection import AbstractConnection

    counter = {"n": 0}
    original = AbstractConnection.send_packed_command

    def counting(self, command, check_health=True):
        counter["n"] += 1
        return original(self, command, check_health)

    AbstractConnection.send_packed_command = counting
    try:
        yield counter
    finally:
        AbstractConnection.send_packed_command = original


def keys_without_ttl(r, pattern: str = "*") -> list[str]:
    """This run's keys matching ``pattern`` that have no TTL (SCAN + PTTL per key: O(N))."""
    return [r.unprefixed(k) for k in r.course_keys(pattern) if r.pttl(k) == -1]


# ====================================================================== serving it over HTTP

def make_app(r, limiter: Callable[..., Decision] = gcra, limit: int = LIMIT, window_ms: int = WINDOW_MS,
             policy: str = "per-ip", clock: Callable[[], int | None] = lambda: None):
    """A Starlette app whose every request goes through ``limiter``, keyed by the client's IP.

    Allowed requests get 200; denied ones get 429 with ``Retry-After`` (whole seconds, rounded up).
    Both carry the IETF draft's fields (draft-ietf-httpapi-ratelimit-headers):
    ``RateLimit-Policy: "per-ip";q=10;w=1`` and ``RateLimit: "per-ip";r=<remaining>;t=<seconds>``.
    ``clock()`` returns ``now_ms`` for the limiter (None: the Redis server's clock).
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    window_s = max(1, math.ceil(window_ms / 1000))
    policy_field = f'"{policy}";q={limit};w={window_s}'

    class RateLimitMiddleware(BaseHTTPMiddleware):
        async def dispatch(self, request, call_next):
            ip = request.client.host if request.client else "unknown"
            d = limiter(r, ip, limit, window_ms, now_ms=clock())
            if d.allowed:
                response = await call_next(request)
                t = math.ceil(d.reset_after_ms / 1000)
            else:
                t = math.ceil(d.retry_after_ms / 1000)
                response = JSONResponse({"error": "too many requests", "retry_after_ms": d.retry_after_ms},
                                        status_code=429)
                response.headers["Retry-After"] = str(t)
            response.headers["RateLimit-Policy"] = policy_field
            response.headers["RateLimit"] = f'"{policy}";r={d.remaining};t={t}'
            return response

    async def hello(request):
        return JSONResponse({"hello": "world"})

    return Starlette(routes=[Route("/", hello)], middleware=[Middleware(RateLimitMiddleware)])
