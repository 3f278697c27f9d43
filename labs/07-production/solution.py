"""Lab 07: counters in production, a concurrency limiter with leases and a guard that keeps
answering when Redis does not.

Every function takes the Redis client ``r`` first.  Build key names with ``r.key(...)``.

Part 1, the limiter.  At most ``limit`` holders may hold the limiter ``name`` at once.  Its
holders live in one sorted set, ``sem:<name>``: the member is the holder's name, the score the end
of its lease in milliseconds, **on the server's clock** (``TIME`` inside a Lua script; never
``time.time()`` in your process: your process and the server do not see the same moment, and a
command may wait in a queue before it runs).  A lease that has ended counts for nothing: a holder
that crashed without releasing gives its slot back when its lease ends.

Part 2, the guard.  When Redis is slow, paused or gone, a request must not wait longer than its
time budget, in total (connect, handshake and reply together), and the answer then comes from a
policy chosen in advance: ``"open"`` admits, ``"closed"`` refuses.  Only "Redis gave no answer" is
answered by the policy; any other error, a wrong password included, is raised.
"""
import time

import redis

from redis_course.lessons.guard import budget_client, deadline, no_answer

POLICIES = ("open", "closed")

#: The longest any one wait of the process's budget client may take; inside a request
#: ``deadline(budget_ms)`` cuts every wait to what is left of that request's budget.
MAX_WAIT_MS = 10_000

_FAST: dict = {}        # id(r) -> (r, its budget client): one per process, kept with its connections
_BREAKER: dict = {}     # id(r) -> {"open_until": monotonic seconds}: the breaker of that server


def acquire(r, name: str, holder: str, limit: int, lease_ms: int) -> bool:
    """Take one of the ``limit`` slots of ``name`` for ``holder`` until ``lease_ms`` from now
    (server clock).  Return True if ``holder`` now holds a slot, False if all ``limit`` slots are
    held by live leases.  A holder that already holds a live lease keeps its slot, with the new
    lease.  ``limit`` or ``lease_ms`` below 1: ValueError.  The key expires with its longest lease.

    One Lua script, one round trip: TIME, ZREMRANGEBYSCORE (the leases that ended), ZCARD, ZADD.
    O(log N + M) for N holders and M ended leases.
    """
    # BEGIN SOLUTION
    if int(limit) < 1 or int(lease_ms) < 1:
        raise ValueError("limit and lease_ms must be at least 1")
    lua = """
    local t = redis.call('TIME')
    local now = t[1] * 1000 + math.floor(t[2] / 1000)
    local limit, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= limit then
      return 0
    end
    redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
    if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
    return 1
    """
    return r.eval(lua, 1, r.key("sem", name), int(limit), int(lease_ms), holder) == 1
    # END SOLUTION


def release(r, name: str, holder: str) -> bool:
    """Give ``holder``'s slot back.  Return True if ``holder`` held a live lease (now removed);
    False if it held nothing or its lease had already ended.  Nobody else's slot is ever touched.

    One Lua script: TIME, ZSCORE, ZREM.  O(log N).
    """
    # BEGIN SOLUTION
    lua = """
    local t = redis.call('TIME')
    local now = t[1] * 1000 + math.floor(t[2] / 1000)
    local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
    redis.call('ZREM', KEYS[1], ARGV[1])
    if score and tonumber(score) > now then return 1 end
    return 0
    """
    return r.eval(lua, 1, r.key("sem", name), holder) == 1
    # END SOLUTION


def refresh(r, name: str, holder: str, lease_ms: int) -> bool:
    """Extend ``holder``'s live lease to end ``lease_ms`` from now (a heartbeat while the work goes
    on).  Return False, changing nothing, if ``holder`` holds no live lease: a lease that has ended
    is never revived (someone else may have the slot by now).  ``lease_ms`` below 1: ValueError.

    One Lua script: TIME, ZSCORE, ZADD XX.  O(log N).
    """
    # BEGIN SOLUTION
    if int(lease_ms) < 1:
        raise ValueError("lease_ms must be at least 1")
    lua = """
    local t = redis.call('TIME')
    local now = t[1] * 1000 + math.floor(t[2] / 1000)
    local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
    if not score or tonumber(score) <= now then return 0 end
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
    if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    return 1
    """
    return r.eval(lua, 1, r.key("sem", name), holder, int(lease_ms)) == 1
    # END SOLUTION


def guarded(r, call, budget_ms: int, policy: str, cooldown_ms: int = 0) -> dict:
    """Run ``call(fast)`` within ``budget_ms`` in total, where ``fast`` is this process's one budget
    client on ``r``'s server: made once (the lesson's ``budget_client``), kept, never retrying, and
    every wait of it inside ``deadline(budget_ms)`` (the lesson's) gets only what is left of the
    budget.  A new client per call would pay a connect and a handshake every time.

    Return ``{"admitted": bool(answer), "by": "redis"}`` when Redis answered, and
    ``{"admitted": policy == "open", "by": policy}`` when it gave no answer (``no_answer(exc)``
    from the lesson: unreachable, too slow, out of memory, read-only, busy; not a wrong password).
    Any other exception is raised as it is.

    ``cooldown_ms`` above 0 adds a breaker: after Redis gave no answer, the policy answers for
    ``cooldown_ms`` without calling ``call``; the first request after that asks Redis again.
    Whatever that request raises, the breaker never stays open.  ``policy`` other than ``"open"``
    or ``"closed"``, ``budget_ms`` below 1 or ``cooldown_ms`` below 0: ValueError, before anything
    is sent.
    """
    # BEGIN SOLUTION
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if int(budget_ms) < 1 or int(cooldown_ms) < 0:
        raise ValueError("budget_ms must be at least 1 and cooldown_ms at least 0")
    breaker = _BREAKER.setdefault(id(r), {"open_until": 0.0})
    if time.monotonic() < breaker["open_until"]:
        return {"admitted": policy == "open", "by": policy}
    kept = _FAST.get(id(r))
    if kept is None or kept[0] is not r:
        kept = _FAST[id(r)] = (r, budget_client(r, MAX_WAIT_MS))
    try:
        with deadline(int(budget_ms)):
            answer = call(kept[1])
    except redis.exceptions.RedisError as exc:
        if not no_answer(exc):
            raise
        if int(cooldown_ms):
            breaker["open_until"] = time.monotonic() + int(cooldown_ms) / 1000
        return {"admitted": policy == "open", "by": policy}
    return {"admitted": bool(answer), "by": "redis"}
    # END SOLUTION


def admit(r, name: str, holder: str, limit: int, lease_ms: int, budget_ms: int, policy: str,
          cooldown_ms: int = 0) -> dict:
    """``acquire`` through ``guarded``: the answer of the limiter within ``budget_ms``, or of the
    policy when Redis gives none in time.  (Given.)"""
    return guarded(r, lambda fast: acquire(fast, name, holder, limit, lease_ms), budget_ms, policy, cooldown_ms)
