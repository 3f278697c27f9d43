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
    raise NotImplementedError("guarded: your code here")


def admit(r, name: str, holder: str, limit: int, lease_ms: int, budget_ms: int, policy: str,
          cooldown_ms: int = 0) -> dict:
    """``acquire`` through ``guarded``: the answer of the limiter within ``budget_ms``, or of the
    policy when Redis gives none in time.  (Given.)"""
    return guarded(r, lambda fast: acquire(fast, name, holder, limit, lease_ms), budget_ms, policy, cooldown_ms)
