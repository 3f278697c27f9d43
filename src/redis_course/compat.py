"""Every use of a private API of redis-py or fakeredis, fenced in one place.

The course needs a few things neither package offers publicly.  Each is named in :data:`USES`, and
:func:`check` verifies that the private names it relies on are still there and shaped as expected;
``tests/foundation/test_compat.py`` runs every check and exercises every use, so an upgrade that
changes one fails with one sentence naming the package, its version and what to update here.

* ``redis._parsers._RESP2Parser`` — a RESP2 reader that keeps status replies apart from bulk
  strings and error texts verbatim (the redis-cli transcripts in the pages);
* fakeredis's ``FakeSocket._decode_result``, ``FakeRedisConnection._connect`` / ``._decode`` and
  ``_helpers.SimpleString`` / ``SimpleError`` — the same raw replies from fakeredis;
* fakeredis's ``TCPFakeRequestHandler`` — a fakeredis server on a Unix socket (the grader's private
  Redis where ``redis-server`` is missing);
* redis-py's ``Connection._command_packer`` — the one place every command passes before the wire
  (the guard against server-wide commands on a server the course does not own).

The fakeredis server version the course emulates is here too: :data:`FAKE_SERVER_VERSION`.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import socketserver
import threading
from itertools import count
from typing import Any, Callable

import redis

#: The Redis version fakeredis emulates everywhere in the course: the Redis 7.0 that Debian 12 ships
#: and CI runs (``FakeServer()`` alone would emulate 8).
FAKE_SERVER_VERSION = (7, 0)


class PrivateAPIChanged(RuntimeError):
    """A dependency no longer has a private name the course relies on."""


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def require(package: str, module: str, names: tuple[str, ...], use: str) -> Any:
    """``module.names[0].names[1]...``, or :class:`PrivateAPIChanged` naming the upgrade."""
    try:
        obj: Any = importlib.import_module(module)
        for name in names:
            obj = getattr(obj, name)
        return obj
    except (ImportError, AttributeError):
        dotted = ".".join((module, *names))
        raise PrivateAPIChanged(
            f"{package} {_version(package)} no longer has {dotted}, which {use} relies on: "
            f"update src/redis_course/compat.py for this {package} version.") from None


# ------------------------------------------------------------------ raw replies (redis-cli transcripts)

class Status(str):
    """A status (simple string) reply such as ``OK`` or ``QUEUED``: redis-cli prints it unquoted."""


class ReplyError(redis.exceptions.ResponseError):
    """An error reply with its text exactly as the server sent it (``ERR ...``, ``WRONGTYPE ...``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def raw_parser_class() -> type:
    """A redis-py RESP2 parser class whose replies are :class:`Status`, :class:`ReplyError`, str, int,
    None or lists of them (subclass of the private ``_RESP2Parser``; reads its ``_buffer``)."""
    require("redis", "redis._parsers", ("_RESP2Parser", "_read_response"), "the transcripts' raw reader")
    base = require("redis", "redis._parsers", ("_RESP2Parser",), "the transcripts' raw reader")

    class RawParser(base):  # type: ignore[misc, valid-type]
        def parse_error(self, response: str):  # type: ignore[override]
            return ReplyError(response)

        def _read_response(self, disable_decoding: bool = False, **kwargs: Any):  # type: ignore[override]
            raw = self._buffer.readline(**kwargs)
            if not raw:
                raise redis.exceptions.ConnectionError("Connection closed by server.")
            byte, rest = raw[:1], raw[1:]
            if byte == b"-":
                return ReplyError(rest.decode("utf-8", errors="replace"))
            if byte == b"+":
                return Status(rest.decode("utf-8", errors="replace"))
            if byte == b":":
                return int(rest)
            if byte in (b"$", b"*") and rest == b"-1":
                return None
            if byte == b"$":
                data = self._buffer.read(int(rest), **kwargs)
                return data if disable_decoding else self.encoder.decode(data)
            if byte == b"*":
                return [self._read_response(disable_decoding, **kwargs) for _ in range(int(rest))]
            raise redis.exceptions.InvalidResponse(f"Protocol Error: {raw!r}")

    return RawParser


class _StatusBytes(bytes):
    pass


def raw_fake_connection_class() -> type:
    """A fakeredis connection class with the same raw replies as :func:`raw_parser_class`."""
    use = "the transcripts' raw fakeredis replies"
    fake_socket = require("fakeredis", "fakeredis._socket", ("FakeSocket",), use)
    require("fakeredis", "fakeredis._socket", ("FakeSocket", "_decode_result"), use)
    simple_string = require("fakeredis", "fakeredis._helpers", ("SimpleString",), use)
    simple_error = require("fakeredis", "fakeredis._helpers", ("SimpleError",), use)
    connection = require("fakeredis", "fakeredis", ("FakeRedisConnection",), use)
    require("fakeredis", "fakeredis", ("FakeRedisConnection", "_connect"), use)
    require("fakeredis", "fakeredis", ("FakeRedisConnection", "_decode"), use)

    class RawFakeSocket(fake_socket):  # type: ignore[misc, valid-type]
        def _decode_result(self, result: Any) -> Any:
            if isinstance(result, list):
                return [self._decode_result(r) for r in result]
            if isinstance(result, simple_string):
                return _StatusBytes(result.value)
            if isinstance(result, simple_error):
                return ReplyError(result.value)
            return result

    class RawFakeConnection(connection):  # type: ignore[misc, valid-type]
        def _connect(self):
            sock = super()._connect()
            sock.__class__ = RawFakeSocket
            return sock

        def _decode(self, response: Any) -> Any:
            if isinstance(response, _StatusBytes):
                return Status(response.decode("utf-8", errors="replace"))
            if isinstance(response, list):
                return [self._decode(r) for r in response]
            return super()._decode(response)

    return RawFakeConnection


# ------------------------------------------------------------------ a fakeredis server on a Unix socket

def unix_fake_server(path: str) -> socketserver.BaseServer:
    """A threaded fakeredis server listening on the Unix socket ``path`` (``serve_forever()`` it).

    fakeredis's ``TCPFakeRequestHandler`` expects its server to have ``fake_server``, ``clients`` and
    ``_shutdown_event``, and each client a hashable address (Unix peers have none: each gets an id).
    """
    from fakeredis import FakeServer

    handler = require("fakeredis", "fakeredis._clients", ("_tcp_server", "TCPFakeRequestHandler"),
                      "the grader's fakeredis server on a Unix socket")

    class UnixFakeServer(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True
        # socketserver's default backlog of 5 makes the 6th of 16 processes connecting at once fail
        # with EAGAIN ("Resource temporarily unavailable") on a Unix socket
        request_queue_size = 128

        def __init__(self) -> None:
            self._shutdown_event = threading.Event()
            self.client_ids = count(1)
            self.clients: dict = {}
            super().__init__(path, handler)
            self.fake_server = FakeServer(server_type="redis", version=FAKE_SERVER_VERSION)

        def get_request(self):
            sock, _ = self.socket.accept()
            return sock, ("unix", next(self.client_ids))

    return UnixFakeServer()


# ------------------------------------------------------------------ the command packer (server-wide guard)

def wrap_command_packer(connection: Any, wrap: Callable[[Any], Any]) -> bool:
    """Replace ``connection._command_packer`` (what packs every command, pipelines included, for the
    wire) with ``wrap(packer)``.  False when this redis-py has no such packer (the caller then relies on
    the public ``send_command``/``pack_command``/``pack_commands``)."""
    packer = getattr(connection, "_command_packer", None)
    if packer is None:
        return False
    connection._command_packer = wrap(packer)
    return True


def check_command_packer() -> None:
    """The packer :func:`wrap_command_packer` replaces exists and has ``pack``."""
    conn = redis.Connection()
    packer = getattr(conn, "_command_packer", None)
    if packer is None or not callable(getattr(packer, "pack", None)):
        raise PrivateAPIChanged(
            f"redis {_version('redis')} no longer packs commands through Connection._command_packer.pack, "
            "which the guard against server-wide commands relies on: update src/redis_course/compat.py "
            "for this redis version.")


# ------------------------------------------------------------------ all uses, for the tests

USES: dict[str, Callable[[], Any]] = {
    "redis-py RESP2 parser": raw_parser_class,
    "fakeredis raw replies": raw_fake_connection_class,
    "fakeredis request handler": lambda: require(
        "fakeredis", "fakeredis._clients", ("_tcp_server", "TCPFakeRequestHandler"),
        "the grader's fakeredis server on a Unix socket"),
    "redis-py command packer": check_command_packer,
}


def check() -> None:
    """Raise :class:`PrivateAPIChanged` for the first use whose private names are gone."""
    for probe in USES.values():
        probe()
