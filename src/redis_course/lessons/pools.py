"""Lesson 07: connections, the part of a Redis call that is not the command.

* :func:`exhausted`: a pool whose every connection is taken.  redis-py's ``ConnectionPool`` raises
  ``MaxConnectionsError`` at once (its default size is 100); a ``BlockingConnectionPool`` waits for
  a connection up to its ``timeout`` (20 s by default, outside any budget), then raises a plain
  ``ConnectionError``.  The guard answers both by its policy without opening the breaker; a
  :func:`~.guard.budget_client` with ``max_connections`` waits only what is left of the deadline.
* :func:`warm_or_per_request`: one client per process keeps its connection open; a client per
  request opens a connection, and pays its connect and handshake, for every call.
* :func:`health_check`: ``health_check_interval`` sends a ``PING`` before a command on a connection
  idle longer than that; a connection the server closed (its ``timeout``) is replaced either way.
* :func:`connect_timeout`: ``socket_timeout`` does not bound the connect; ``socket_connect_timeout``
  does (a listener that never accepts).
Both backends for :func:`exhausted`; a private server (or a local listener) for the others.
"""

from __future__ import annotations

import contextlib
import socket
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from . import guard as g


def _pool(r, blocking: bool, size: int, timeout_s: float):
    """A pool of ``size`` connections to the server of ``r``, of the same connection class."""
    base = r.connection_pool
    if blocking:
        return redis.BlockingConnectionPool(
            connection_class=base.connection_class, max_connections=size, timeout=timeout_s, **base.connection_kwargs
        )
    return redis.ConnectionPool(connection_class=base.connection_class, max_connections=size, **base.connection_kwargs)


def exhausted(r, size: int = 2, wait_ms: int = 50) -> dict:
    """Take every connection of a pool of ``size`` and ask for one more, from a plain and from a
    blocking pool (``timeout`` ``wait_ms``), then ask through a guard.  Returns per pool
    ``{"error", "message", "waited_ms", "verdict", "breaker"}``, and redis-py's defaults."""
    out: dict = {}
    for kind, blocking in (("ConnectionPool", False), ("BlockingConnectionPool", True)):
        pool = _pool(r, blocking, size, wait_ms / 1000)
        held = [pool.get_connection() for _ in range(size)]
        started = time.monotonic()
        try:
            pool.get_connection()
            error, message = None, None
        except redis.exceptions.RedisError as exc:
            error, message = type(exc).__name__, str(exc)
        waited_ms = (time.monotonic() - started) * 1000
        guard = g.Guard(lambda: pool.get_connection(), "closed")
        verdict = guard()
        out[kind] = {
            "error": error,
            "message": message,
            "waited_ms": waited_ms,
            "verdict": verdict,
            "breaker": guard.breaker.state,
        }
        for connection in held:
            pool.release(connection)
        pool.disconnect()
    out["defaults"] = {
        "ConnectionPool.max_connections": redis.ConnectionPool().max_connections,
        "BlockingConnectionPool.max_connections": redis.BlockingConnectionPool().max_connections,
        "BlockingConnectionPool.timeout": redis.BlockingConnectionPool().timeout,
    }
    conn = redis.Redis().connection_pool.make_connection()  # no connect: only its settings
    out["defaults"].update(
        {name: getattr(conn, name) for name in ("socket_timeout", "socket_connect_timeout", "health_check_interval")}
    )
    return out


def _connections_received(admin) -> int:
    return int(admin.info("stats")["total_connections_received"])


def warm_or_per_request(srv, calls: int = 50) -> dict:
    """``calls`` INCRs on a private server through one budget client, then through a new client per
    call.  Returns, for each, the connections the server accepted and the mean ms per call."""
    base, admin = srv.client(prefix="course:pool:"), srv.client(prefix="")
    out = {}
    shared = g.budget_client(base, 200)
    for how in ("one client per process", "a client per request"):
        before = _connections_received(admin)
        started = time.monotonic()
        for _ in range(calls):
            c = shared if how == "one client per process" else g.budget_client(base, 200)
            c.incr(c.key("n"))
            if c is not shared:
                c.close()
        ms = (time.monotonic() - started) * 1000 / calls
        out[how] = {"connections": _connections_received(admin) - before, "ms_per_call": ms}
    shared.close()
    return out


def _pings(admin) -> int:
    return int(admin.info("commandstats").get("cmdstat_ping", {}).get("calls", 0))


def health_check(srv, interval_s: int = 1) -> dict:
    """PINGs the server counted before a command: right after another command, and after the
    connection was idle longer than ``interval_s``, with and without ``health_check_interval``.
    Then the server closes idle connections (``CONFIG SET timeout``) and a command follows."""
    admin = srv.client(prefix="")
    out = {}
    for hci in (0, interval_s):
        c = srv.client(prefix="course:hc:", socket_timeout=1, retry=Retry(NoBackoff(), 0), health_check_interval=hci)
        c.incr("n")
        before = _pings(admin)
        c.incr("n")
        busy = _pings(admin) - before
        time.sleep(interval_s + 0.3)
        before = _pings(admin)
        c.incr("n")
        idle = _pings(admin) - before
        out[f"health_check_interval={hci}"] = {"pings_when_busy": busy, "pings_after_idle": idle}
        c.close()
    admin.config_set("timeout", interval_s)  # the server closes connections idle that long
    try:
        c = srv.client(prefix="course:hc:", socket_timeout=1, retry=Retry(NoBackoff(), 0))
        c.incr("n")
        before = _connections_received(admin)
        time.sleep(interval_s + 1.5)  # the server checks idle clients about once a second
        try:
            c.incr("n")
            out["closed by the server, next command"] = "ok"
        except redis.exceptions.RedisError as exc:
            out["closed by the server, next command"] = type(exc).__name__
        out["new connections"] = _connections_received(admin) - before
        c.close()
    finally:
        admin.config_set("timeout", 0)
    return out


@contextlib.contextmanager
def never_accepting() -> "contextlib.AbstractContextManager[int]":
    """A TCP port on 127.0.0.1 that takes no more connections: a listener with a full backlog that
    never accepts, as a host that does not answer.  Yields the port."""
    listener = socket.socket()
    fill: list[socket.socket] = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(3):  # the backlog holds what it can; the rest waits
            s = socket.socket()
            s.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                s.connect(("127.0.0.1", port))
            fill.append(s)
        yield port
    finally:
        for s in fill:
            s.close()
        listener.close()


def connect_timeout(socket_timeout_s: float = 0.2, connect_timeout_s: float = 0.2, patience_s: float = 1.5) -> dict:
    """Connect to a port that never accepts: with ``socket_timeout`` alone (the connect keeps
    redis-py's 5 s; cut off here after ``patience_s``) and with ``socket_connect_timeout`` too.
    Returns ``{how: (error, seconds)}`` and the connect timeout redis-py chose."""
    out: dict = {}
    with never_accepting() as port:
        for how, kwargs in (
            ("socket_timeout", dict(socket_timeout=socket_timeout_s)),
            (
                "socket_timeout + socket_connect_timeout",
                dict(socket_timeout=socket_timeout_s, socket_connect_timeout=connect_timeout_s),
            ),
        ):
            c = redis.Redis(port=port, retry=Retry(NoBackoff(), 0), **kwargs)
            conn = c.connection_pool.make_connection()
            chosen = conn.socket_connect_timeout
            conn.socket_connect_timeout = min(chosen, patience_s)  # nothing here waits 5 s
            started = time.monotonic()
            try:
                conn.connect()
                error = None
            except redis.exceptions.RedisError as exc:
                error = type(exc).__name__
            out[how] = {"connect_timeout_s": chosen, "error": error, "waited_s": time.monotonic() - started}
            conn.disconnect()
    return out
