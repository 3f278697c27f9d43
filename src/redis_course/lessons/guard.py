"""Lesson 07: a limiter that keeps answering when Redis does not.

A limiter sits in front of every request, so a Redis that is slow, paused or gone must cost each
request a small, known time, and the answer must then come from a policy chosen in advance:

* **fail-open**: allow (the API stays up; the limit is not enforced while Redis is away);
* **fail-closed**: deny (the limit holds; the API is down for everyone while Redis is away);
* **local**: decide with a token bucket in this process, at this process's share of the limit.

:func:`budget_client` makes a client that never retries and whose every wait (connect, handshake,
each reply) gets only what is left of the request's :func:`deadline`: a socket timeout alone bounds
each wait, so a request on a new connection to a slow server could wait for the connect, the
handshake and the reply, each up to the budget.  Make it once per process and keep it: its pool
keeps connections warm, and a connection per request pays the connect and the handshake every time.
:func:`no_answer` says which errors mean "Redis gave no answer now".  :class:`Breaker` stops asking
Redis for ``cooldown_ms`` after a failure, so that during an outage only one request in a while
pays the budget.  :class:`Guard` puts them together.  Everything that decides by time takes a
``clock`` (seconds, monotonic by default).
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
import time
from typing import Callable, Iterator, NamedTuple

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

POLICIES = ("open", "closed", "local")


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("redis_course_deadline", default=None)


@contextlib.contextmanager
def deadline(budget_ms: float) -> Iterator[None]:
    """``with deadline(50):`` every wait of a :func:`budget_client` inside the block (connect,
    handshake, each reply) gets only what is left of these 50 ms, and a wait that would start after
    them raises ``TimeoutError`` at once.  Per thread (a context variable)."""
    token = _DEADLINE.set(time.monotonic() + budget_ms / 1000)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(cap: float | None) -> float | None:
    """Seconds this wait may take: what is left of the deadline, at most ``cap``."""
    end = _DEADLINE.get()
    if end is None:
        return cap
    left = end - time.monotonic()
    if left <= 0:
        raise redis.exceptions.TimeoutError("the request's time budget is spent")
    return left if cap is None else min(cap, left)


class _DeadlineConnection:
    """Mixed into a redis-py connection class: each wait gets what is left of the :func:`deadline`."""

    def _connect(self):
        cap = self.socket_connect_timeout
        self.socket_connect_timeout = _left(cap)
        try:
            return super()._connect()
        finally:
            self.socket_connect_timeout = cap

    def send_packed_command(self, command, check_health=True):
        if self._sock is not None:
            self._sock.settimeout(_left(self.socket_timeout))
        return super().send_packed_command(command, check_health)

    def read_response(self, *args, **kwargs):
        try:
            left = _left(self.socket_timeout)
        except redis.exceptions.TimeoutError:
            self.disconnect()  # a reply is still due on this connection: never read it later
            raise
        if _DEADLINE.get() is not None and "timeout" not in kwargs:
            kwargs["timeout"] = left
        return super().read_response(*args, **kwargs)


_CLASSES: dict[type, type] = {}


def _deadline_class(cls: type) -> type:
    if cls not in _CLASSES:
        _CLASSES[cls] = type("Deadline" + cls.__name__, (_DeadlineConnection, cls), {})
    return _CLASSES[cls]


class _DeadlineQueue(queue.LifoQueue):
    """A ``BlockingConnectionPool``'s queue whose wait for a free connection gets only what is left
    of the :func:`deadline` (at most the pool's ``timeout``); a spent deadline waits not at all."""

    def get(self, block: bool = True, timeout: float | None = None):
        if block:
            try:
                timeout = _left(timeout)
            except redis.exceptions.TimeoutError:
                block = False
        return super().get(block, timeout)


def budget_client(r, budget_ms: int, max_connections: int | None = None):
    """A client on the same server, database and key prefix as ``r`` that never retries (redis-py 8
    retries a timed-out command by default), whose connect and every reply wait at most
    ``budget_ms``, and inside a :func:`deadline` only what is left of it.

    Make it once per process and share it (it is thread-safe; its pool keeps connections open):
    a new client per request pays a connect and a handshake (HELLO, CLIENT SETINFO) every time.
    No round trip: connections open on first use.  For an embedded fakeredis client (no network,
    nothing to wait for) ``r`` itself is returned.

    With ``max_connections`` the pool is a ``BlockingConnectionPool`` of that size: a caller that
    finds every connection busy waits for one, at most ``budget_ms`` and only what is left of the
    deadline, then gets ``ConnectionError("No connection available.")``, which the guard answers
    without opening the breaker.  Without it the pool is redis-py's ``ConnectionPool``: a new
    connection for each concurrent caller up to 100, then ``MaxConnectionsError`` at once.
    """
    if getattr(r, "backend", "") == "fakeredis":
        return r
    from ..core.backend import CourseRedis

    pool = r.connection_pool
    kwargs = dict(pool.connection_kwargs)
    kwargs.update(socket_timeout=budget_ms / 1000, socket_connect_timeout=budget_ms / 1000, retry=Retry(NoBackoff(), 0))
    klass = _deadline_class(pool.connection_class)
    if max_connections is None:
        pool = redis.ConnectionPool(connection_class=klass, **kwargs)
    else:
        pool = redis.BlockingConnectionPool(
            connection_class=klass,
            max_connections=max_connections,
            timeout=budget_ms / 1000,
            queue_class=_DeadlineQueue,
            **kwargs,
        )
    client = CourseRedis(connection_pool=pool)
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

    def abandon(self) -> None:
        """The call ended without saying whether Redis answers (a bug raised before or after it):
        the probe is over, the state stays, and the next request after the cooldown probes again."""
        with self.lock:
            self.probing = False

    def record(self, ok: bool) -> None:
        with self.lock:
            self.probing = False
            self.open_until = None if ok else self.clock() + self.cooldown_ms / 1000

    @property
    def state(self) -> str:
        return "closed" if self.open_until is None else "open"


class Verdict(NamedTuple):
    allowed: bool
    source: str  # "redis", or the policy that answered: "open", "closed", "local"
    error: str | None  # why Redis did not answer (the exception's class), None when it did


E = redis.exceptions

#: Errors that mean "Redis gave no decision now": unreachable, too slow, still loading its data,
#: out of memory (noeviction), a read-only replica or a cluster without a primary for the slot
#: during a failover (READONLY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN).
NO_ANSWER = (
    E.ConnectionError,
    E.TimeoutError,
    E.OutOfMemoryError,
    E.ReadOnlyError,
    E.ClusterDownError,
    E.TryAgainError,
)

#: ``ConnectionError`` subclasses that are no outage: a wrong password or user, a missing
#: permission.  They do not heal by waiting, so answering them by a policy would fail open (or
#: closed) for ever without a word: they are raised, as bugs are.
NOT_AN_OUTAGE = (E.AuthenticationError, E.AuthorizationError, E.ExternalAuthProviderError)

#: Replies redis-py leaves as a plain ``ResponseError`` that mean "no answer now": a script or
#: function running past ``busy-reply-threshold`` (BUSY), failover states it maps only in some
#: versions, and a primary whose replicas lag more than ``min-replicas-max-lag`` (NOREPLICAS).
NO_ANSWER_PREFIXES = ("BUSY ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "LOADING ", "NOREPLICAS ")


def no_answer(exc: BaseException) -> bool:
    """True if ``exc`` means "Redis gave no answer now" (answer by the policy); False for a bug or a
    configuration error (raise it)."""
    if isinstance(exc, NOT_AN_OUTAGE):
        return False
    if isinstance(exc, NO_ANSWER):
        return True
    return isinstance(exc, E.ResponseError) and str(exc).startswith(NO_ANSWER_PREFIXES)


def pool_exhausted(exc: BaseException) -> bool:
    """True if ``exc`` says this process's pool had no connection to give: ``MaxConnectionsError``
    (``ConnectionPool``, at once) or the plain ``ConnectionError`` a ``BlockingConnectionPool``
    raises when its ``timeout`` passes.  Redis itself may be fine: no reason to open the breaker."""
    if isinstance(exc, E.MaxConnectionsError):
        return True
    return type(exc) is E.ConnectionError and str(exc) == "No connection available."


class Guard:
    """``Guard(decide, policy)``: call ``decide(*args)`` (a Redis limiter on a :func:`budget_client`)
    and return a :class:`Verdict`; when Redis fails or the breaker is open, answer by ``policy``.

    ``decide`` returns a truthy/falsy value or an object with ``.allowed``.  Only the errors for
    which :func:`no_answer` is true are answered by the policy; a bug in ``decide`` or a wrong
    password is raised (the choice of this course: a bug shows at once, and it fails every request
    until it is fixed; a team that would rather fail open on bugs too catches them itself).
    A full pool (:func:`pool_exhausted`) is answered by the policy without opening the breaker: Redis is fine, this process is busy.  With ``budget_ms`` the whole call runs under a
    :func:`deadline`.  ``local`` needs a :class:`LocalBucket`.
    """

    def __init__(
        self,
        decide: Callable[..., object],
        policy: str = "open",
        local: LocalBucket | None = None,
        breaker: Breaker | None = None,
        budget_ms: float | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}")
        if policy == "local" and local is None:
            raise ValueError("policy 'local' needs a LocalBucket")
        self.decide, self.policy, self.local = decide, policy, local
        self.breaker = breaker or Breaker()
        self.budget_ms = budget_ms
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
            if self.budget_ms is None:
                answer = self.decide(*args, **kwargs)
            else:
                with deadline(self.budget_ms):
                    answer = self.decide(*args, **kwargs)
        except E.RedisError as exc:
            if pool_exhausted(exc):
                self.breaker.abandon()
                return self._fallback(type(exc).__name__, local_says)
            if not no_answer(exc):
                self.breaker.record(True)  # Redis answered, with an error: it is up
                raise
            self.breaker.record(False)
            return self._fallback(type(exc).__name__, local_says)
        except BaseException:
            self.breaker.abandon()  # a bug outside Redis: the probe says nothing
            raise
        self.breaker.record(True)
        return Verdict(bool(getattr(answer, "allowed", answer)), "redis", None)
