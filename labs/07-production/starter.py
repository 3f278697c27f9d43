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
    raise NotImplementedError("acquire: your code here")


def release(r, name: str, holder: str) -> bool:
    """Give ``holder``'s slot back.  Return True if ``holder`` held a live lease (now removed);
    False if it held nothing or its lease had already ended.  Nobody else's slot is ever touched.

    One Lua script: TIME, ZSCORE, ZREM.  O(log N).
    """
    raise NotImplementedError("release: your code here")


def refresh(r, name: str, holder: str, lease_ms: int) -> bool:
    """Extend ``holder``'s live lease to end ``lease_ms`` from now (a heartbeat while the work goes
    on).  Return False, changing nothing, if ``holder`` holds no live lease: a lease that has ended
    is never revived (someone else may have the slot by now).  ``lease_ms`` below 1: ValueError.

    One Lua script: TIME, ZSCORE, ZADD XX.  O(log N).
    """
    raise NotImplementedError("refresh: your code here")


def guarded(r, call, budget_ms: int, policy: str) -> dict:
    """Run ``call(fast)``, where ``fast`` is a client on ``r``'s server whose connect and every reply
    wait at most ``budget_ms`` and that never retries (``budget_client`` from the lesson).

    Return ``{"admitted": bool(answer), "by": "redis"}`` when Redis answered, and
    ``{"admitted": policy == "open", "by": policy}`` when it gave no answer (an error in
    ``NO_ANSWER``).  Any other exception is raised as it is.  ``policy`` other than ``"open"`` or
    ``"closed"``, or ``budget_ms`` below 1: ValueError, before anything is sent.
    """
    raise NotImplementedError("guarded: your code here")


def admit(r, name: str, holder: str, limit: int, lease_ms: int, budget_ms: int, policy: str) -> dict:
    """``acquire`` through ``guarded``: the answer of the limiter within ``budget_ms``, or of the
    policy when Redis gives none in time.  (Given.)"""
    return guarded(r, lambda fast: acquire(fast, name, holder, limit, lease_ms), budget_ms, policy)
