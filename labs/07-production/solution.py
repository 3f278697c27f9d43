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
time budget, and the answer then comes from a policy chosen in advance: ``"open"`` admits,
``"closed"`` refuses.  Only "Redis gave no answer" is answered by the policy; any other error is
a bug and is raised.
"""
import redis

from redis_course.lessons.guard import budget_client

POLICIES = ("open", "closed")

#: Errors that mean "Redis gave no answer" (unreachable, too slow, out of memory, read-only).
NO_ANSWER = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
             redis.exceptions.OutOfMemoryError, redis.exceptions.ReadOnlyError)


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


def guarded(r, call, budget_ms: int, policy: str) -> dict:
    """Run ``call(fast)``, where ``fast`` is a client on ``r``'s server whose connect and every reply
    wait at most ``budget_ms`` and that never retries (``budget_client`` from the lesson).

    Return ``{"admitted": bool(answer), "by": "redis"}`` when Redis answered, and
    ``{"admitted": policy == "open", "by": policy}`` when it gave no answer (an error in
    ``NO_ANSWER``).  Any other exception is raised as it is.  ``policy`` other than ``"open"`` or
    ``"closed"``, or ``budget_ms`` below 1: ValueError, before anything is sent.
    """
    # BEGIN SOLUTION
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if int(budget_ms) < 1:
        raise ValueError("budget_ms must be at least 1")
    fast = budget_client(r, int(budget_ms))
    try:
        answer = call(fast)
    except NO_ANSWER:
        return {"admitted": policy == "open", "by": policy}
    finally:
        fast.connection_pool.disconnect()
    return {"admitted": bool(answer), "by": "redis"}
    # END SOLUTION


def admit(r, name: str, holder: str, limit: int, lease_ms: int, budget_ms: int, policy: str) -> dict:
    """``acquire`` through ``guarded``: the answer of the limiter within ``budget_ms``, or of the
    policy when Redis gives none in time.  (Given.)"""
    return guarded(r, lambda fast: acquire(fast, name, holder, limit, lease_ms), budget_ms, policy)
