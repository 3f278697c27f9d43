"""One way to get a Redis client, for notebooks, labs, tests and the grader alike.

``connect()`` returns a redis-py client:

* embedded **fakeredis** (with Lua through ``lupa``) when ``REDIS_URL`` is not set: nothing to install;
* a **real server** when ``REDIS_URL`` is set (``redis://host:port/db``, ``rediss://...``, ``unix:///path``).

Both speak RESP2 and decode replies to ``str``, so the same code prints the same thing on both.

Key safety.  Every key the course writes goes under one prefix per run, ``r.key("views")`` →
``course:3f9a1c:views``; ``r.cleanup()`` deletes only those keys (SCAN MATCH + UNLINK).  On a server
the course did not start itself, server-wide commands (FLUSHDB, FLUSHALL, CONFIG SET, SHUTDOWN,
DEBUG, SAVE, BGSAVE, ...) are refused before they leave the client, also inside pipelines and in the
text of Lua scripts.  Private servers started by :mod:`redis_course.core.servers` are "owned" and allow them.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import threading
from typing import Any
from urllib.parse import urlparse

import redis
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection

from .compat import FAKE_SERVER_VERSION, wrap_command_packer
from ..l10n import _
from ..l10n.messages import msg

ENV_URL = "REDIS_URL"
ENV_PREFIX = "COURSE_KEY_PREFIX"
CONNECT_TIMEOUT = 3.0  # seconds to open a TCP connection
SOCKET_TIMEOUT = 15.0  # seconds to wait for any reply: nothing hangs for ever
PROTOCOL = 2  # RESP2 on both backends (redis-py 8 defaults to RESP3)

#: Commands that act on the whole server (first word, or first two words).
SERVER_WIDE = {
    "FLUSHDB",
    "FLUSHALL",
    "SHUTDOWN",
    "DEBUG",
    "SAVE",
    "BGSAVE",
    "BGREWRITEAOF",
    "SWAPDB",
    "REPLICAOF",
    "SLAVEOF",
    "FAILOVER",
    "MONITOR",
    "CONFIG SET",
    "CONFIG RESETSTAT",
    "CONFIG REWRITE",
    "SCRIPT FLUSH",
    "FUNCTION FLUSH",
    "FUNCTION RESTORE",
    "CLIENT KILL",
    "CLIENT PAUSE",
    "CLUSTER RESET",
    "CLUSTER FAILOVER",
    "ACL SETUSER",
    "ACL DELUSER",
    "ACL LOAD",
    "ACL SAVE",
    "MODULE LOAD",
    "MODULE UNLOAD",
}
_SCRIPT_CMDS = {"EVAL", "EVAL_RO", "FCALL", "FUNCTION LOAD", "SCRIPT LOAD"}
_LUA_CALL = re.compile(
    r"""\b(?:call|pcall)\s*\(\s*['"]\s*(flushdb|flushall|shutdown|debug|save|bgsave|config|swapdb|replicaof|slaveof)\b""",
    re.IGNORECASE,
)


class CourseError(Exception):
    """An error meant for a person: one sentence, no traceback (also inside Jupyter)."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"\x1b[31m{self}\x1b[0m"]


class ServerWideCommandRefused(CourseError, redis.exceptions.RedisError):
    """A server-wide command was about to be sent to a server the course does not own."""


def _command_name(args: tuple[Any, ...]) -> tuple[str, str]:
    words = []
    for a in args[:2]:
        if isinstance(a, bytes):
            a = a.decode("utf-8", "replace")
        words.extend(str(a).split())
    first = words[0].upper() if words else ""
    second = f"{first} {words[1].upper()}" if len(words) > 1 else first
    return first, second


def check_command(args: tuple[Any, ...], where: str) -> None:
    """Raise :class:`ServerWideCommandRefused` if ``args`` is a server-wide command."""
    first, two = _command_name(args)
    if first in SERVER_WIDE or two in SERVER_WIDE:
        raise ServerWideCommandRefused(
            msg("refused_command", command=two if two in SERVER_WIDE else first, where=where)
        )
    if first in _SCRIPT_CMDS or two in _SCRIPT_CMDS:
        for a in args[1:3]:
            text = a.decode("utf-8", "replace") if isinstance(a, bytes) else str(a)
            hit = _LUA_CALL.search(text)
            if hit:
                raise ServerWideCommandRefused(msg("refused_command", command=hit.group(1).upper(), where=where))


class _GuardedPacker:
    """Wraps redis-py's command packer: every command is packed here before it is sent."""

    def __init__(self, packer: Any, where: Any) -> None:
        self._packer, self._where = packer, where

    def pack(self, *args: Any):
        check_command(args, self._where())
        return self._packer.pack(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._packer, name)


class _GuardMixin:
    """Checks every command at the moment it is packed for the wire (plain calls, pipelines, MULTI).

    redis-py's ``send_command`` and ``pack_commands`` (pipelines) pack through a private packer
    without calling ``pack_command``, so the packer itself is wrapped, and the public entry points
    check too (for redis-py versions that pack differently).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        wrap_command_packer(self, lambda packer: _GuardedPacker(packer, self._guard_where))

    def send_command(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        check_command(args, self._guard_where())
        return super().send_command(*args, **kwargs)  # type: ignore[misc]

    def pack_command(self, *args: Any):  # type: ignore[override]
        check_command(args, self._guard_where())
        return super().pack_command(*args)  # type: ignore[misc]

    def pack_commands(self, commands: Any):  # type: ignore[override]
        for cmd in commands:
            check_command(tuple(cmd), self._guard_where())
        return super().pack_commands(commands)  # type: ignore[misc]

    def _guard_where(self) -> str:
        path = getattr(self, "path", None)
        return f"unix://{path}" if path else f"{getattr(self, 'host', '?')}:{getattr(self, 'port', '?')}"


class GuardedConnection(_GuardMixin, Connection):
    pass


class GuardedSSLConnection(_GuardMixin, SSLConnection):
    pass


class GuardedUnixConnection(_GuardMixin, UnixDomainSocketConnection):
    pass


class _CourseClient:
    """What the course adds to a redis-py client: a key namespace, cleanup and a description."""

    backend: str = "?"
    prefix: str = ""
    owned: bool = False
    where: str = ""

    def key(self, *parts: object) -> str:
        """The full key name for ``parts`` joined by ``:``, under this run's prefix (no round trip)."""
        return self.prefix + ":".join(str(p) for p in parts)

    def unprefixed(self, full_key: str) -> str:
        """``course:3f9a1c:views`` → ``views``: for printing keys the way the lesson names them."""
        return full_key[len(self.prefix) :] if full_key.startswith(self.prefix) else full_key

    def course_keys(self, pattern: str = "*") -> list[str]:
        """This run's keys matching ``pattern`` (SCAN MATCH, O(N) over the whole keyspace), sorted."""
        return sorted(self.scan_iter(match=self.prefix + pattern, count=1000))  # type: ignore[attr-defined]

    def cleanup(self) -> int:
        """Delete this run's keys and nothing else (SCAN MATCH prefix* + UNLINK in batches of 500)."""
        deleted, batch = 0, []
        for k in self.scan_iter(match=self.prefix + "*", count=1000):  # type: ignore[attr-defined]
            batch.append(k)
            if len(batch) >= 500:
                deleted += self.unlink(*batch)  # type: ignore[attr-defined]
                batch = []
        if batch:
            deleted += self.unlink(*batch)  # type: ignore[attr-defined]
        return deleted

    def server_version(self) -> str:
        if self.backend == "fakeredis":
            return ".".join(map(str, FAKE_SERVER_VERSION))
        return str(self.info("server").get("redis_version", "?"))  # type: ignore[attr-defined]

    def describe(self) -> str:
        if self.backend == "fakeredis":
            import fakeredis

            what = _(
                "fakeredis {version} (embedded, Redis {semantics} semantics); key prefix {prefix}",
                version=fakeredis.__version__,
                semantics=self.server_version(),
                prefix=self.prefix,
            )
        else:
            what = _(
                "Redis {version} at {where}; key prefix {prefix}",
                version=self.server_version(),
                where=self.where,
                prefix=self.prefix,
            )
        return _("backend: {description}", description=what)

    @property
    def is_fake(self) -> bool:
        return self.backend == "fakeredis"


class CourseRedis(_CourseClient, redis.Redis):
    """A redis-py client on a real server, with the course's key namespace and command guard."""


def _fake_class():
    import fakeredis

    class CourseFakeRedis(_CourseClient, fakeredis.FakeRedis):
        """A fakeredis client (an embedded, in-process Redis) with the course's key namespace."""

    return CourseFakeRedis


_lock = threading.Lock()
_fake_server = None
_cleanup_registered: set[str] = set()
#: The prefix this process made up itself (and so owns), with the pid that made it.  Child processes
#: inherit the prefix through COURSE_KEY_PREFIX and share the keys, but never delete them on exit.
_own_prefix: tuple[str, int] | None = None


def fake_server():
    """The one fakeredis server of this process: every ``connect()`` without REDIS_URL shares it."""
    global _fake_server
    with _lock:
        if _fake_server is None:
            import fakeredis

            _fake_server = fakeredis.FakeServer(version=FAKE_SERVER_VERSION)
        return _fake_server


def run_prefix() -> str:
    """This run's key prefix: ``COURSE_KEY_PREFIX`` if set (child processes inherit it), else a new one."""
    global _own_prefix
    prefix = os.environ.get(ENV_PREFIX)
    if not prefix:
        prefix = f"course:{secrets.token_hex(3)}:"
        os.environ[ENV_PREFIX] = prefix
        _own_prefix = (prefix, os.getpid())
    return prefix


def _describe_url(url: str) -> str:
    p = urlparse(url)
    if p.scheme == "unix":
        return f"unix://{p.path}"
    return f"{p.hostname or 'localhost'}:{p.port or 6379}"


def connect(
    url: str | None = None,
    *,
    prefix: str | None = None,
    owned: bool = False,
    verbose: bool = False,
    decode_responses: bool = True,
    **kwargs: Any,
):
    """Return a client: fakeredis if neither ``url`` nor ``REDIS_URL`` is given, else the server there.

    ``owned=True`` marks a server the course started itself (see :mod:`redis_course.core.servers`): then
    server-wide commands are allowed.  Raises :class:`CourseError` with one clear sentence when the
    URL is malformed or the server is unreachable.  Costs one PING round trip on a real server.
    """
    url = (os.environ.get(ENV_URL) if url is None else url) or None  # "" forces fakeredis
    prefix = prefix if prefix is not None else run_prefix()
    if url is None:
        client = _fake_class()(
            server=fake_server(),
            decode_responses=decode_responses,
            protocol=PROTOCOL,
            version=FAKE_SERVER_VERSION,
            **kwargs,
        )
        client.backend, client.prefix, client.owned, client.where = "fakeredis", prefix, True, "fakeredis"
        if verbose:
            print(client.describe())
        return client

    try:
        where = _describe_url(url) if "://" in url else url
    except ValueError:  # e.g. a port that is not a number
        where = url
    scheme = urlparse(url).scheme
    conn_class = {"redis": GuardedConnection, "rediss": GuardedSSLConnection, "unix": GuardedUnixConnection}.get(scheme)
    if conn_class is None:
        raise CourseError(
            msg("bad_url", url=url, detail=_("unknown scheme {scheme!r}", scheme=scheme) if scheme else _("no scheme"))
        )
    if owned:
        conn_class = {"redis": Connection, "rediss": SSLConnection, "unix": UnixDomainSocketConnection}[scheme]
    socket_timeout = kwargs.pop("socket_timeout", SOCKET_TIMEOUT)
    connect_timeout = kwargs.pop("socket_connect_timeout", CONNECT_TIMEOUT)
    # The first PING is part of connecting: a server that accepts but never answers must fail within
    # the connect timeout, not the (longer) timeout for replies.
    first_timeout = min(t for t in (socket_timeout, connect_timeout, SOCKET_TIMEOUT) if t is not None)

    def make_pool(read_timeout):
        return redis.ConnectionPool.from_url(
            url,
            connection_class=conn_class,
            decode_responses=decode_responses,
            protocol=PROTOCOL,
            socket_timeout=read_timeout,
            socket_connect_timeout=connect_timeout,
            **kwargs,
        )

    try:
        probe_pool, pool = make_pool(first_timeout), make_pool(socket_timeout)
    except ValueError as exc:
        raise CourseError(msg("bad_url", url=url, detail=_url_detail(exc))) from None
    client = CourseRedis(connection_pool=pool)
    client.backend, client.prefix, client.owned, client.where = "redis", prefix, owned, where
    _probe(probe_pool, where, first_timeout)
    if not owned and _own_prefix == (prefix, os.getpid()) and prefix not in _cleanup_registered:
        # Leave nothing behind on somebody else's server: the keys of the prefix this process made up
        # go when it ends.  A prefix passed in or inherited belongs to someone else, who cleans it up.
        _cleanup_registered.add(prefix)
        atexit.register(_cleanup_quietly, url, prefix, os.getpid())
    if verbose:
        print(client.describe())
    return client


def _probe(probe_pool: redis.ConnectionPool, where: str, timeout: float) -> None:
    """PING through ``probe_pool`` (then close it); a server that cannot be used is one sentence."""
    try:
        CourseRedis(connection_pool=probe_pool).ping()
    except redis.exceptions.AuthenticationError as exc:
        raise CourseError(msg("auth", where=where, detail=_sentence_part(exc))) from None
    except redis.exceptions.TimeoutError:
        raise CourseError(msg("timeout", where=where, seconds=f"{timeout:g}")) from None
    except redis.exceptions.ConnectionError as exc:
        raise CourseError(msg("refused", where=where, detail=_connect_detail(exc))) from None
    except redis.exceptions.ResponseError as exc:
        if "NOAUTH" in str(exc) or "WRONGPASS" in str(exc):
            raise CourseError(msg("auth", where=where, detail=_sentence_part(exc))) from None
        raise
    finally:
        probe_pool.disconnect()


def _url_detail(exc: ValueError) -> str:
    """Why redis-py could not read a URL, in the reader's language when we know the reason."""
    text = str(exc)
    if "Port could not be cast" in text or "port" in text.lower() and "int" in text:
        return _("the port is not a number")
    if "invalid literal for int()" in text:
        return _("the database number is not a number")
    return _sentence_part(exc)


def _connect_detail(exc: Exception) -> str:
    """Why a connection failed, from the operating system's error number when there is one."""
    import errno
    import socket

    cause = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, socket.gaierror):
        return _("the host name is unknown")
    known = {
        errno.ECONNREFUSED: _("nothing listens there (connection refused)"),
        errno.ENOENT: _("there is no such socket file"),
        errno.EHOSTUNREACH: _("the host cannot be reached"),
        errno.ENETUNREACH: _("the network cannot be reached"),
        errno.EACCES: _("permission denied"),
    }
    if isinstance(cause, OSError) and cause.errno in known:
        return known[cause.errno]
    text = str(exc).split(". ")[-1].strip(". ")
    return text or _("the connection failed")


def _sentence_part(exc: Exception) -> str:
    """A server's error text without its final punctuation, to sit inside one of our sentences."""
    return str(exc).strip().rstrip(".?! ") or type(exc).__name__


def _cleanup_quietly(url: str, prefix: str, pid: int) -> None:
    if os.getpid() != pid:  # a forked child that exits normally must not delete its parent's keys
        return
    try:
        connect(url, prefix=prefix, socket_timeout=5).cleanup()
    except Exception:  # the process is ending: never turn cleanup into a traceback
        pass


def lua_available() -> bool:
    """True if fakeredis can run Lua here (the ``lupa`` package is importable)."""
    try:
        import lupa  # noqa: F401
    except ImportError:
        return False
    return True
