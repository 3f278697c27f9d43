"""Lesson 07: concurrency limiting, a counting semaphore on a sorted set with leases.

A rate limiter counts requests per period; a concurrency limiter counts requests *in flight*.  The
holders of a semaphore live in one sorted set, ``sem:{<name>}:holders``: the member is a random
token per acquisition, the score the end of its lease in ms.  Every script first drops the leases
that ended (ZREMRANGEBYSCORE), so a holder that crashed without releasing keeps its slot only until
its lease ends, never for ever.  The clock is the server's (TIME inside the script) unless the
caller passes ``now_ms``.

* :func:`acquire` / :func:`release` / :func:`extend`: the semaphore, one EVALSHA each.
* :func:`acquire_fair`: the same holders plus a queue of waiters ordered by ticket (INCR), so a
  client that polls often cannot overtake one that polls rarely.
* :func:`acquire_fenced` / :func:`fenced_write`: leases with fencing tokens, so that a holder whose
  lease ended while it stalled cannot overwrite the work of the next one (:func:`stalled_holder`).
* :func:`counter_acquire` / :func:`counter_release`: the INCR/DECR semaphore that is often written
  first, to show that a crashed holder's slot is lost for good.
* :func:`replay_concurrency`: one request trace through a rate limiter and a concurrency limiter.
"""

from __future__ import annotations

import heapq
import secrets
from typing import Callable, NamedTuple

from .ratelimit_lua import CLOCK_LUA, Script

# --8<-- [start:acquire]
ACQUIRE_LUA = (
    CLOCK_LUA
    + """
-- KEYS[1]: holders (token -> lease end, ms).  ARGV[2]: limit, ARGV[3]: lease ms, ARGV[4]: token
local limit, lease, token = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)         -- ended leases: crashed or stalled holders
local held = redis.call('ZCARD', KEYS[1])
if held >= limit then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, held, tonumber(first[2]) - now}                  -- full: when the first lease ends
end
redis.call('ZADD', KEYS[1], now + lease, token)
if redis.call('PTTL', KEYS[1]) < lease + slack then redis.call('PEXPIRE', KEYS[1], lease + slack) end
return {1, held + 1, 0}
"""
)
# --8<-- [end:acquire]

RELEASE_LUA = (
    CLOCK_LUA
    + """
-- KEYS[1]: holders.  ARGV[2]: token.  1 if the token still held a live lease, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
if not score then return 0 end
return tonumber(score) > now and 1 or 0
"""
)

EXTEND_LUA = (
    CLOCK_LUA
    + """
-- KEYS[1]: holders.  ARGV[2]: token, ARGV[3]: lease ms.  A lease that has ended is not revived.
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not score or tonumber(score) <= now then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return 0
end
local lease = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
if redis.call('PTTL', KEYS[1]) < lease + slack then redis.call('PEXPIRE', KEYS[1], lease + slack) end
return 1
"""
)

ACQUIRE_FAIR_LUA = (
    CLOCK_LUA
    + """
-- KEYS[1]: holders, KEYS[2]: queue (token -> ticket), KEYS[3]: waiters (token -> waiting until),
-- KEYS[4]: ticket counter.  ARGV[2]: limit, ARGV[3]: lease ms, ARGV[4]: token, ARGV[5]: patience ms
local limit, lease, token, patience = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('ZREM', KEYS[2], gone)                          -- waiters that stopped asking leave the line
  redis.call('ZREM', KEYS[3], gone)
end
if not redis.call('ZSCORE', KEYS[2], token) then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), token)
end
redis.call('ZADD', KEYS[3], now + patience, token)
local free = limit - redis.call('ZCARD', KEYS[1])
local place = redis.call('ZRANK', KEYS[2], token)
local got = 0
if place < free then
  redis.call('ZREM', KEYS[2], token)
  redis.call('ZREM', KEYS[3], token)
  redis.call('ZADD', KEYS[1], now + lease, token)
  got = 1
end
local ttl = math.max(lease, patience) + slack
for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end    -- the line: it lives as long as its waiters
-- the holders' TTL is only ever lengthened: extend() may have given a lease more than this one
if redis.call('PTTL', KEYS[1]) < lease + slack then redis.call('PEXPIRE', KEYS[1], lease + slack) end
return {got, place}
"""
)

FENCED_ACQUIRE_LUA = ACQUIRE_LUA.replace(
    "return {1, held + 1, 0}",
    "return {1, held + 1, redis.call('INCR', KEYS[2])}         -- the fence: one more per grant, never reset",
)

#: Write ``value`` to the resource only if ``fence`` is not older than the newest fence it has seen.
FENCED_WRITE_LUA = """
-- KEYS[1]: the resource (a hash: fence, value).  ARGV[1]: the writer's fence, ARGV[2]: the value
local newest = tonumber(redis.call('HGET', KEYS[1], 'fence') or 0)
if tonumber(ARGV[1]) < newest then return 0 end             -- a holder whose lease ended long ago
redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
return 1
"""

_ACQUIRE, _RELEASE, _EXTEND, _FAIR = (
    Script(ACQUIRE_LUA),
    Script(RELEASE_LUA),
    Script(EXTEND_LUA),
    Script(ACQUIRE_FAIR_LUA),
)
_FENCED, _FENCED_WRITE = Script(FENCED_ACQUIRE_LUA), Script(FENCED_WRITE_LUA)


class Slot(NamedTuple):
    """The answer of :func:`acquire`: ``token`` is None when the semaphore is full."""

    token: str | None
    held: int  # holders after this call
    retry_after_ms: int  # when full: until the first lease ends (a holder may release earlier)


def _now(now_ms: int | None):
    return "" if now_ms is None else int(now_ms)


def _tag(name: str) -> str:
    """``{name}``: a hash tag, so that every key of one semaphore is in one cluster slot (a script
    on several keys in different slots is refused with CROSSSLOT)."""
    return "{" + name + "}"


def holders_key(r, name: str) -> str:
    return r.key("sem", _tag(name), "holders")


def acquire(r, name: str, limit: int, lease_ms: int, now_ms: int | None = None) -> Slot:
    """Take one of ``limit`` slots for ``lease_ms``; the token proves it later.

    One EVALSHA: ZREMRANGEBYSCORE (ended leases, O(log N + M)) + ZCARD + ZADD (O(log N)) + PEXPIRE.
    """
    if limit < 1 or lease_ms < 1:
        raise ValueError("limit and lease_ms must be at least 1")
    token = secrets.token_hex(8)
    ok, held, retry = _ACQUIRE(r, holders_key(r, name), _now(now_ms), limit, lease_ms, token)
    return Slot(token if ok == 1 else None, held, retry)


def release(r, name: str, token: str, now_ms: int | None = None) -> bool:
    """Give the slot back.  True if the lease was still live; False if it had ended (another client
    may have had the slot meanwhile: the work ran without the limit's protection).  One EVALSHA:
    ZSCORE + ZREM, O(log N)."""
    return _RELEASE(r, holders_key(r, name), _now(now_ms), token) == 1


def extend(r, name: str, token: str, lease_ms: int, now_ms: int | None = None) -> bool:
    """Renew a live lease to ``now + lease_ms`` (a heartbeat).  False if it had ended: stop the work
    or acquire again.  One EVALSHA: ZSCORE + ZADD, O(log N)."""
    return _EXTEND(r, holders_key(r, name), _now(now_ms), token, lease_ms) == 1


def acquire_fair(
    r, name: str, token: str, limit: int, lease_ms: int, patience_ms: int, now_ms: int | None = None
) -> tuple[bool, int]:
    """Acquire in the order clients first asked: ``(acquired, place in line)``.

    The caller keeps its ``token`` while it waits and asks again; a waiter that does not ask again
    within ``patience_ms`` leaves the line.  One EVALSHA on four keys (holders, queue, waiters,
    ticket counter; one hash tag, so one cluster slot): O(log N) per ZADD/ZRANK plus the expired
    waiters removed.  The holders' TTL is only lengthened, never shortened below a lease that
    :func:`extend` renewed.
    """
    keys = [
        holders_key(r, name),
        r.key("sem", _tag(name), "queue"),
        r.key("sem", _tag(name), "waiters"),
        r.key("sem", _tag(name), "ticket"),
    ]
    ok, place = _evalsha(_FAIR, r, keys, _now(now_ms), limit, lease_ms, token, patience_ms)
    return ok == 1, place


def acquire_fenced(r, name: str, limit: int, lease_ms: int, now_ms: int | None = None) -> tuple[str | None, int]:
    """:func:`acquire` that also hands out a **fencing token**: ``(token, fence)``, the fence one
    more than any granted before (INCR in the same script, so fences follow the order of grants),
    ``(None, 0)`` when full.  The fence counter ``sem:{name}:fence`` has no TTL: a counter that
    expired and started again at 1 would make the newest holder look the oldest.  One EVALSHA."""
    if limit < 1 or lease_ms < 1:
        raise ValueError("limit and lease_ms must be at least 1")
    token = secrets.token_hex(8)
    ok, _held, fence = _evalsha(
        _FENCED, r, [holders_key(r, name), r.key("sem", _tag(name), "fence")], _now(now_ms), limit, lease_ms, token
    )
    return (token, fence) if ok == 1 else (None, 0)


def fenced_write(r, key: str, fence: int, value: str) -> bool:
    """Write ``value`` to the resource ``key`` (a hash) unless a newer fence has written there: the
    resource, not the holder, decides whether the holder's lease still counts.  In production the
    resource is where the work lands (a row with a fence column, a storage that keeps the newest
    fence).  One EVALSHA: HGET + HSET, O(1)."""
    return _FENCED_WRITE(r, key, fence, value) == 1


def stalled_holder(r, name: str, fenced: bool, start_ms: int = 1_700_000_000_000) -> dict:
    """A holder takes the only slot for 1 s and stalls for 2 s (a GC pause, a swapped-out VM); at
    +1.5 s its lease has ended and a second holder takes the slot and writes its result; at +2 s the
    first one wakes up and writes its own, unaware.  With ``fenced`` the writes go through
    :func:`fenced_write` with each holder's fence, else through a plain HSET.

    Returns the resource's value at the end and whether the late write was refused.  Controlled
    clock (``now_ms``), so the run is the same on every machine and backend.
    """
    key = r.key("resource", name)
    a, fence_a = acquire_fenced(r, name, 1, 1000, now_ms=start_ms)
    b, fence_b = acquire_fenced(r, name, 1, 1000, now_ms=start_ms + 1500)  # a's lease has ended
    if fenced:
        b_wrote = fenced_write(r, key, fence_b, "b")
    else:
        r.hset(key, "value", "b")
        b_wrote = True
    still_holds = extend(r, name, a, 1000, now_ms=start_ms + 2000)  # what a could have checked
    if fenced:
        late = fenced_write(r, key, fence_a, "a")
    else:
        r.hset(key, "value", "a")
        late = True
    return {
        "fences": (fence_a, fence_b),
        "b_wrote": b_wrote,
        "a_still_held": still_holds,
        "late_write_applied": late,
        "value": r.hget(key, "value"),
    }


def _evalsha(script: Script, r, keys: list[str], *args):
    """EVALSHA with every key declared (a script on several keys), SCRIPT LOAD once on NOSCRIPT."""
    from redis.exceptions import NoScriptError

    try:
        return r.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
    except NoScriptError:
        r.script_load(script.text)
        return r.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)


# ---------------------------------------------------------------------- the semaphore often written first


def counter_acquire(r, name: str, limit: int) -> bool:
    """INCR, and DECR back if over the limit: two round trips, and no lease.  A holder that dies
    before :func:`counter_release` keeps its slot for ever."""
    key = r.key("sem", name, "count")
    if r.incr(key) <= limit:
        return True
    r.decr(key)
    return False


def counter_release(r, name: str) -> None:
    """DECR: O(1)."""
    r.decr(r.key("sem", name, "count"))


# ---------------------------------------------------------------------- one trace, two limiters


class Request(NamedTuple):
    at_ms: int
    duration_ms: int


def replay_concurrency(
    requests: list[Request], admit: Callable[[int], str | None], finish: Callable[[str, int], None]
) -> dict:
    """Replay ``requests`` (sorted by arrival) in simulated time: ``admit(now_ms)`` returns a token
    or None; an admitted request finishes ``duration_ms`` later and ``finish(token, now_ms)`` is
    called at that moment (before any arrival at the same ms).

    Returns ``{"admitted": [bool per request], "in_flight": [(ms, n) after every event]}``.
    """
    running: list[tuple[int, str]] = []
    admitted, in_flight = [], []
    for req in requests:
        while running and running[0][0] <= req.at_ms:
            end, token = heapq.heappop(running)
            finish(token, end)
            in_flight.append((end, len(running)))
        token = admit(req.at_ms)
        admitted.append(token is not None)
        if token is not None:
            heapq.heappush(running, (req.at_ms + req.duration_ms, token))
        in_flight.append((req.at_ms, len(running)))
    while running:
        end, token = heapq.heappop(running)
        finish(token, end)
        in_flight.append((end, len(running)))
    return {"admitted": admitted, "in_flight": in_flight}


def slowdown_trace(
    rate_per_s: int = 20,
    seconds: int = 10,
    fast_ms: int = 50,
    slow_ms: int = 2000,
    slow_from_s: int = 3,
    slow_to_s: int = 6,
    start_ms: int = 1_700_000_000_000,
) -> list[Request]:
    """Requests at a steady ``rate_per_s``; they take ``fast_ms`` except between ``slow_from_s`` and
    ``slow_to_s``, when the service behind the limiter slows down to ``slow_ms`` each."""
    step = 1000 // rate_per_s
    out = []
    for i in range(rate_per_s * seconds):
        t = i * step
        slow = slow_from_s * 1000 <= t < slow_to_s * 1000
        out.append(Request(start_ms + t, slow_ms if slow else fast_ms))
    return out


def poll_race(
    r,
    name: str,
    poll_every_ms: dict[str, int],
    fair: bool,
    limit: int = 1,
    hold_ms: int = 100,
    duration_ms: int = 5000,
    start_ms: int = 1_700_000_000_000,
) -> dict[str, dict]:
    """Clients that want the semaphore again as soon as they release it, each asking every
    ``poll_every_ms[client]`` while it waits, in simulated time (a controlled clock).  Clients start
    7 ms apart and ask again 1 ms after they release.

    Returns ``{client: {"acquired": n, "longest_wait_ms": ms}}``.  With ``fair=False`` each poll is
    :func:`acquire`; with ``fair=True`` :func:`acquire_fair` with one token per wait.
    """
    events = [(start_ms + 7 * i, i, c, "poll") for i, c in enumerate(poll_every_ms)]  # not in lockstep
    heapq.heapify(events)
    stats = {c: {"acquired": 0, "longest_wait_ms": 0} for c in poll_every_ms}
    waiting_since = {c: start_ms for c in poll_every_ms}
    tokens = {c: secrets.token_hex(8) for c in poll_every_ms}
    order = len(events)
    while events:
        now, _, client, what = heapq.heappop(events)
        if now >= start_ms + duration_ms:
            break
        if what == "release":
            release(r, name, tokens[client], now_ms=now)
            tokens[client] = secrets.token_hex(8)
            waiting_since[client] = now
            nxt = (now + 1, "poll")  # wants it again a moment later
        else:
            if fair:
                ok = acquire_fair(r, name, tokens[client], limit, hold_ms * 2, poll_every_ms[client] * 2, now_ms=now)[0]
            else:
                slot = acquire(r, name, limit, hold_ms * 2, now_ms=now)
                ok = slot.token is not None
                tokens[client] = slot.token or tokens[client]
            if ok:
                stats[client]["acquired"] += 1
                wait = now - waiting_since[client]
                stats[client]["longest_wait_ms"] = max(stats[client]["longest_wait_ms"], wait)
                nxt = (now + hold_ms, "release")
            else:
                nxt = (now + poll_every_ms[client], "poll")
        order += 1
        heapq.heappush(events, (nxt[0], order, client, nxt[1]))
    for c, since in waiting_since.items():  # a client still waiting at the end waited that long
        stats[c]["longest_wait_ms"] = max(stats[c]["longest_wait_ms"], start_ms + duration_ms - since)
    return stats
