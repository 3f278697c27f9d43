"""Lesson 04: rate limiters on Redis, the published ones and the ones to use.

Two groups live here.

**The published limiters, faithfully** (the INCR reference's "rate limiter 1", "rate limiter 2" and
the list limiter).  They are written as *step functions*: generators that send one Redis command
per step and ``yield`` a line saying what it answered, so a lesson can run two clients step by step
in any interleaving (:func:`interleave`), or stop a client for good between two steps, which is what
a crash does.  :func:`run` runs one to the end and returns whether the request was allowed.

**The limiters to use**: :func:`fixed_window`, :func:`first_hit_window`, :func:`list_window`,
:func:`sliding_log`, :func:`sliding_window_counter`, :func:`token_bucket` and :func:`gcra`.  Each is
one Lua script (EVALSHA, one round trip, atomic; in :mod:`.ratelimit_lua`), keeps all its state under one key that always has
a TTL, and answers a :class:`Decision`: allowed or not, how many requests remain, and in how many
milliseconds to retry.  The clock is the server's (``TIME`` inside the script) unless ``now_ms`` is
given: a controllable clock for deterministic demonstrations and tests.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from typing import Callable, Generator, Iterable, Iterator

from ..l10n import _

from .ratelimit_lua import (  # noqa: F401 - the limiters to use, re-exported: rl.fixed_window, rl.GCRA_LUA, ...
    _CLOCK,
    FIRST_HIT_WINDOW_LUA,
    FIXED_WINDOW_LUA,
    GCRA_LUA,
    LIMIT,
    LIMITERS,
    LIST_WINDOW_LUA,
    SLIDING_LOG_LUA,
    SLIDING_WINDOW_COUNTER_LUA,
    TOKEN_BUCKET_LUA,
    WINDOW_MS,
    Decision,
    Script,
    fill,
    first_hit_window,
    fixed_window,
    gcra,
    list_window,
    sliding_log,
    sliding_window_counter,
    token_bucket,
)


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
    pipe = r.pipeline(transaction=True)  # MULTI ... EXEC: one round trip
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
_LIMITER2 = Script(LIMITER2_LUA)


def limiter2_lua(r, ip: str, limit: int = LIMIT) -> Steps:
    """Rate limiter 2 fixed as the documentation says: one EVALSHA runs INCR and EXPIRE together.

    One round trip; the script runs atomically, so no client can stop between INCR and EXPIRE.
    The decision is made on the value the script returns (``> limit`` is denied).
    """
    key = r.key(ip)
    current = _LIMITER2(r, key)
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


BURST_BUDGET_S = 0.8  # a burst must end well inside the published limiters' one-second TTL
BURST_ATTEMPTS = 5


def burst(limiter: Callable[..., Steps], r, ip: str, n: int = 12) -> int:
    """How many of ``n`` requests in a row ``limiter(r, ip)`` allows, all sent within one second.

    The published limiters count in a key that lives one second (``EXPIRE key 1``) and read the time
    nowhere: on a machine so loaded that ``n`` requests take longer, the key expires during the burst
    and the count starts again, which is not what the lesson shows.  So the key is deleted and the
    burst sent again when it took more than :data:`BURST_BUDGET_S` (at most :data:`BURST_ATTEMPTS`
    times).  Costs ``n`` runs of the limiter (2 or 3 round trips each) per attempt, plus one DEL."""
    key = r.key(ip)
    for _attempt in range(BURST_ATTEMPTS):
        r.delete(key)
        start = time.monotonic()
        allowed = [run(limiter(r, ip)) for _ in range(n)].count(True)
        if time.monotonic() - start < BURST_BUDGET_S:
            break
    return allowed


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
            out(f"{name}: " + (_("allowed") if done.value else _("denied")))
    for name, steps in clients.items():
        steps.close()
    return decisions


# ====================================================================== measuring


def bursty_trace() -> list[int]:
    """Request times in ms from 0 for one client: a quiet start, a burst across the 1 s boundary,
    a long overload, a pause and one big burst."""
    times = list(range(0, 900, 100))  # 9 calm requests
    times += [905 + 6 * i for i in range(15)]  # 15 just before the boundary
    times += [1005 + 6 * i for i in range(15)]  # 15 just after it
    times += list(range(1150, 3000, 50))  # 20 per second for almost 2 s
    times += [4000] * 25  # 25 at the same millisecond
    times += list(range(4500, 6000, 125))  # then 8 per second
    return times


def replay(
    r,
    limiter: Callable[..., Decision],
    times: Iterable[int],
    client_id: str,
    start_ms: int = 1_700_000_000_000,
    limit: int = LIMIT,
    window_ms: int = WINDOW_MS,
) -> list[Decision]:
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


def make_app(
    r,
    limiter: Callable[..., Decision] = gcra,
    limit: int = LIMIT,
    window_ms: int = WINDOW_MS,
    policy: str = "per-ip",
    clock: Callable[[], int | None] = lambda: None,
):
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
                response = JSONResponse(
                    {"error": "too many requests", "retry_after_ms": d.retry_after_ms}, status_code=429
                )
                response.headers["Retry-After"] = str(t)
            response.headers["RateLimit-Policy"] = policy_field
            response.headers["RateLimit"] = f'"{policy}";r={d.remaining};t={t}'
            return response

    async def hello(request):
        return JSONResponse({"hello": "world"})

    return Starlette(routes=[Route("/", hello)], middleware=[Middleware(RateLimitMiddleware)])
