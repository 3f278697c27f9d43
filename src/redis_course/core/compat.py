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
  (the guard against server-wide commands on a server the course does not own);
* fakeredis's ``FakeSocket._run_command`` / ``.exec_``, ``_commands.Key`` — fakeredis refusing
  commands across hash slots as one node of a cluster does (:func:`refuse_cross_slot`).

The fakeredis server version the course emulates is here too: :data:`FAKE_SERVER_VERSION`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import select
import socket
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
            f"update src/redis_course/core/compat.py for this {package} version."
        ) from None


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


class _WholeWrites:
    """A non-blocking socket written whole: wait (up to 30 s) whenever its buffer is full."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view) :]
            except BlockingIOError:
                if not select.select([], [self.sock], [], 30)[1]:
                    raise ConnectionError("the client read nothing for 30 s") from None
        return len(data)

    def flush(self) -> None:
        pass


def unix_fake_server(path: str) -> socketserver.BaseServer:
    """A threaded fakeredis server listening on the Unix socket ``path`` (``serve_forever()`` it).

    fakeredis's ``TCPFakeRequestHandler`` expects its server to have ``fake_server``, ``clients`` and
    ``_shutdown_event``, and each client a hashable address (Unix peers have none: each gets an id).
    """
    from fakeredis import FakeServer

    handler = require(
        "fakeredis",
        "fakeredis._clients",
        ("_tcp_server", "TCPFakeRequestHandler"),
        "the grader's fakeredis server on a Unix socket",
    )

    class Handler(handler):  # type: ignore[misc, valid-type]
        """fakeredis's handler with replies written whole: its socket is non-blocking, so a reply
        larger than the socket's buffer ended a client that read it slowly (a 1 MB GET)."""

        def setup(self) -> None:
            super().setup()
            self.writer.writer = _WholeWrites(self.connection)

    class UnixFakeServer(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True
        # socketserver's default backlog of 5 makes the 6th of 16 processes connecting at once fail
        # with EAGAIN ("Resource temporarily unavailable") on a Unix socket
        request_queue_size = 128

        def __init__(self) -> None:
            self._shutdown_event = threading.Event()
            self.client_ids = count(1)
            self.clients: dict = {}
            super().__init__(path, Handler)
            self.fake_server = FakeServer(server_type="redis", version=FAKE_SERVER_VERSION)

        def get_request(self):
            sock, _ = self.socket.accept()
            return sock, ("unix", next(self.client_ids))

    return UnixFakeServer()


# ------------------------------------------------------------------ fakeredis as one node of a cluster

CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot"
#: commands whose keys are counted by an argument instead of marked in fakeredis's signature
_NUMKEYS_COMMANDS = {"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}


def refuse_cross_slot(slot_of: Callable[[bytes], int]) -> Callable[[], None]:
    """Make every fakeredis connection of this process refuse, as one node of a Redis Cluster does,
    a command, a MULTI/EXEC transaction or a script whose keys are in different hash slots
    (``CROSSSLOT``).  Returns a function that undoes it.

    fakeredis has no cluster mode.  A command's keys are the arguments its private ``Signature``
    marks as ``Key`` (``EVAL``/``FCALL``: the ``numkeys`` declared keys); the checks wrap
    ``FakeSocket._run_command`` (every command, queued ones too) and ``FakeSocket.exec_`` (the keys
    of a whole transaction).  Cost: one CRC16 per key.
    """
    sock = require("fakeredis", "fakeredis._socket._fakesocket", ("FakeSocket",), "the cluster mode of fakeredis")
    key_type = require("fakeredis", "fakeredis._commands", ("Key",), "the cluster mode of fakeredis")
    simple_error = require("fakeredis", "fakeredis._helpers", ("SimpleError",), "the cluster mode of fakeredis")
    run, exec_ = sock._run_command, sock.exec_

    def keys_of(sig: Any, args: list) -> list:
        if sig.name.lower() in _NUMKEYS_COMMANDS and len(args) > 1:
            try:
                return list(args[2 : 2 + int(args[1])])
            except ValueError:
                return []
        types = list(sig.fixed)
        if sig.repeat:
            types += [sig.repeat[i % len(sig.repeat)] for i in range(max(0, len(args) - len(types)))]
        return [a for a, t in zip(args, types) if isinstance(t, key_type)]

    def slots(sig: Any, args: list) -> set[int]:
        return {slot_of(k) for k in keys_of(sig, args)}

    def _run_command(self, func, sig, args, from_script):
        # a script's redis.call is not checked: a one-node Redis 7.0 cluster serves every slot and
        # lets a script reach keys it did not declare (tests/foundation/test_fake_cluster.py)
        if not from_script and len(slots(sig, args)) > 1:
            return simple_error(CROSSSLOT)
        return run(self, func, sig, args, from_script)

    def exec_with_slots(self, *conditions):
        queued = getattr(self, "_transaction", None) or []
        found = set().union(*(slots(sig, args) for _func, sig, args in queued)) if queued else set()
        if len(found) > 1:
            self._forget_transaction()
            self._clear_watches()
            raise simple_error(CROSSSLOT)
        return exec_(self, *conditions)

    sock._run_command, sock.exec_ = _run_command, exec_with_slots

    def undo() -> None:
        sock._run_command, sock.exec_ = run, exec_

    return undo


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
            "which the guard against server-wide commands relies on: update src/redis_course/core/compat.py "
            "for this redis version."
        )


# ------------------------------------------------------------------ all uses, for the tests

USES: dict[str, Callable[[], Any]] = {
    "redis-py RESP2 parser": raw_parser_class,
    "fakeredis raw replies": raw_fake_connection_class,
    "fakeredis request handler": lambda: require(
        "fakeredis",
        "fakeredis._clients",
        ("_tcp_server", "TCPFakeRequestHandler"),
        "the grader's fakeredis server on a Unix socket",
    ),
    "redis-py command packer": check_command_packer,
    "fakeredis cluster mode": lambda: [
        require("fakeredis", module, names, "the cluster mode of fakeredis")
        for module, names in (
            ("fakeredis._socket._fakesocket", ("FakeSocket", "exec_")),
            ("fakeredis._socket._fakesocket", ("FakeSocket", "_run_command")),
            ("fakeredis._socket._fakesocket", ("FakeSocket", "_forget_transaction")),
            ("fakeredis._socket._fakesocket", ("FakeSocket", "_clear_watches")),
            ("fakeredis._commands", ("Key",)),
            ("fakeredis._helpers", ("SimpleError",)),
        )
    ],
}


def check() -> None:
    """Raise :class:`PrivateAPIChanged` for the first use whose private names are gone."""
    for probe in USES.values():
        probe()


# ------------------------------------------------------------------ fakeredis' Lua, as bare as Redis's

_BARE_LUA = (
    "local loaded = package.loaded; loaded.io = nil; loaded.os = nil; loaded.package = nil; "
    "loaded.python = nil; loaded.debug = nil; python = nil; debug = nil; print = nil; "
    "io = nil; dofile = nil; loadfile = nil; require = nil; package = nil; module = nil; os = nil"
)


def _no_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    """lupa's attribute filter for scripts: no Python attribute of any object is reachable from Lua."""
    raise AttributeError("not available to scripts")


def bare_fakeredis_lua() -> None:
    """Scripts on fakeredis get Redis 7's Lua sandbox and nothing of Python: no ``io``, ``os``,
    ``dofile``, ``loadfile``, ``require``, ``package``, ``print`` and ``debug`` (Redis 7 has none of them), no ``python`` table (lupa's ``python.eval``/``python.builtins`` and its registry
    entry), and no Python attribute of any object a script can hold (``redis.call.__globals__``).
    fakeredis makes its Lua runtimes (EVAL and FUNCTION) from
    ``fakeredis.commands_mixins.scripting_mixin.LUA_MODULE``, which is wrapped here; the grader's
    fakeredis server calls this before serving student code."""
    mixin = importlib.import_module("fakeredis.commands_mixins.scripting_mixin")
    lua = require(
        "fakeredis",
        "fakeredis.commands_mixins.scripting_mixin",
        ("LUA_MODULE",),
        "the grader's fakeredis server (a Lua without io and os)",
    )
    if getattr(lua, "_course_bare", False):
        return

    class _Bare:
        _course_bare = True

        def __getattr__(self, name: str) -> Any:
            return getattr(lua, name)

        @staticmethod
        def LuaRuntime(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - lupa's name
            kwargs.update(register_eval=False, register_builtins=False, attribute_filter=_no_attributes)
            runtime = lua.LuaRuntime(*args, **kwargs)
            runtime.execute(_BARE_LUA)
            return runtime

    mixin.LUA_MODULE = _Bare()

    # FUNCTION's engine sets itself up with debug.getinfo and setfenv, kept as its own locals, then
    # runs every library in a read-only view of the globals it allows: its runtime gets the same
    # filters, and the bare prelude once the engine is set up (before, FUNCTION LOAD failed with
    # "attempt to index global 'debug'")
    engine_cls = require(
        "fakeredis",
        "fakeredis.commands_mixins._lua_functions",
        ("FunctionsEngine",),
        "the grader's fakeredis server (FUNCTION in a Lua without io and os)",
    )

    class _Filtered:
        def __getattr__(self, name: str) -> Any:
            return getattr(lua, name)

        @staticmethod
        def LuaRuntime(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - lupa's name
            kwargs.update(register_eval=False, register_builtins=False, attribute_filter=_no_attributes)
            return lua.LuaRuntime(*args, **kwargs)

    set_up = engine_cls.__init__

    def init(self: Any, lua_module: Any, *args: Any, **kwargs: Any) -> None:
        set_up(self, _Filtered(), *args, **kwargs)
        self.runtime.execute(_BARE_LUA)

    engine_cls.__init__ = init
