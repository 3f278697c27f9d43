"""Lesson 07: a limiter that keeps answering when Redis does not.

A limiter sits in front of every request, so a Redis that is slow, paused or gone must cost each
request a small, known time, and the answer must then come from a policy chosen in advance:

* **fail-open**: allow (the API stays up; the limit is not enforced while Redis is away);
* **fail-closed**: deny (the limit holds; the API is down for everyone while Redis is away);
* **local**: decide with a token bucket in this process, at this process's share of the limit.

:func:`budget_client` makes a client whose every wait (connect and reply) is bounded by the budget
and that never retries.  :class:`Breaker` stops asking Redis for ``cooldown_ms`` after a failure, so
that during an outage only one request in a while pays the timeout.  :class:`Guard` puts them
together.  Everything that decides by time takes a ``clock`` (seconds, monotonic by default).
"""
from __future__ import annotations

import threading
import time
from typing import Callable, NamedTuple

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

POLICIES = ("open", "closed", "local")


def budget_client(r, budget_ms: int):
    """A client on the same server, database and key prefix as ``r`` whose connect and every reply
    wait at most ``budget_ms``, with no retry (redis-py 8 retries a timed-out command by default).

    No round trip: connections open on first use.  For an embedded fakeredis client (no network,
    nothing to wait for) ``r`` itself is returned.
    """
    if getattr(r, "backend", "") == "fakeredis":
        return r
    from ..backend import CourseRedis

    pool = r.connection_pool
    kwargs = dict(pool.connection_kwargs)
    kwargs.update(socket_timeout=budget_ms / 1000, socket_connect_timeout=budget_ms / 1000,
                  retry=Retry(NoBackoff(), 0))
    client = CourseRedis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))
    client.backend, client.prefix, client.owned, client.where = r.backend, r.prefix, r.owned, r.where
    return client


class LocalBucket:
    """A token bucket in this process: ``limit`` tokens, refilled at ``limit`` per ``window_ms``.

    The fallback while Redis is away.  With N processes behind a load balancer give each
    ``limit / N``: together they stay near the limit without talking to each other.  Thread-safe.
    """

    def __init__(self, limit: float, window_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity, self.rate = float(limit), float(limit) / window_ms  # tokens per ms
        self.clock = clock
        self.tokens, self.at = float(limit), clock()
        self.lock = threading.Lock()

    def allow(self) -> bool:
        with self.lock:
            now = self.clock()
            self.tokens = min(self.capacity, self.tokens + (now - self.at) * 1000 * self.rate)
            self.at = now
            if self.tokens >= 1:
                self.tokens -= 1
                return True
            return False


class Breaker:
    """After a failure, skip Redis for ``cooldown_ms``; then let one request try (half-open).

    ``closed`` (Redis is asked) → a failure → ``open`` (Redis is not asked) → ``cooldown_ms`` later
    one probe → success: ``closed`` again; failure: ``open`` for another ``cooldown_ms``.
    """

    def __init__(self, cooldown_ms: int = 1000, clock: Callable[[], float] = time.monotonic) -> None:
        self.cooldown_ms, self.clock = cooldown_ms, clock
        self.open_until: float | None = None
        self.probing = False
        self.lock = threading.Lock()

    def may_try(self) -> bool:
        with self.lock:
            if self.open_until is None:
                return True
            if self.clock() < self.open_until or self.probing:
                return False
            self.probing = True  # one probe at a time
            return True

    def record(self, ok: bool) -> None:
        with self.lock:
            self.probing = False
            self.open_until = None if ok else self.clock() + self.cooldown_ms / 1000

    @property
    def state(self) -> str:
        return "closed" if self.open_until is None else "open"


class Verdict(NamedTuple):
    allowed: bool
    source: str          # "redis", or the policy that answered: "open", "closed", "local"
    error: str | None    # why Redis did not answer (the exception's class), None when it did


#: Errors that mean "Redis gave no decision": unreachable, too slow, out of memory (noeviction),
#: a read-only replica after a failover.  Any other error is a bug in the caller and is raised.
NO_ANSWER = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
             redis.exceptions.OutOfMemoryError, redis.exceptions.ReadOnlyError)


class Guard:
    """``Guard(decide, policy)``: call ``decide(*args)`` (a Redis limiter on a :func:`budget_client`)
    and return a :class:`Verdict`; when Redis fails or the breaker is open, answer by ``policy``.

    ``decide`` returns a truthy/falsy value or an object with ``.allowed``.  Only the errors in
    :data:`NO_ANSWER` are caught: a bug in ``decide`` is raised.  ``local`` needs a :class:`LocalBucket`.
    """

    def __init__(self, decide: Callable[..., object], policy: str = "open", local: LocalBucket | None = None,
                 breaker: Breaker | None = None) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}")
        if policy == "local" and local is None:
            raise ValueError("policy 'local' needs a LocalBucket")
        self.decide, self.policy, self.local = decide, policy, local
        self.breaker = breaker or Breaker()
        self.fallbacks = 0

    def _fallback(self, error: str | None, local_says: bool | None) -> Verdict:
        self.fallbacks += 1
        if self.policy == "open":
            return Verdict(True, "open", error)
        if self.policy == "closed":
            return Verdict(False, "closed", error)
        return Verdict(bool(local_says), "local", error)

    def __call__(self, *args, **kwargs) -> Verdict:
        # The local bucket counts every request, also those Redis decides: when Redis goes away it
        # is already as empty as the traffic made it (a bucket left full would admit a burst).
        local_says = self.local.allow() if self.local is not None else None
        if not self.breaker.may_try():
            return self._fallback("breaker open", local_says)
        try:
            answer = self.decide(*args, **kwargs)
        except NO_ANSWER as exc:
            self.breaker.record(False)
            return self._fallback(type(exc).__name__, local_says)
        self.breaker.record(True)
        return Verdict(bool(getattr(answer, "allowed", answer)), "redis", None)
