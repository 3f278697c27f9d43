"""One browser console: a fakeredis server and two clients, answering as redis-cli prints.

This module runs inside the browser (Pyodide) as well as in CPython (its tests).  A command line is
split with :func:`redis_course.core.transcripts.split_args` and its reply formatted with
:func:`redis_course.core.transcripts.format_reply`, the functions that check the pages' transcripts, on
the same raw fakeredis connection (status replies unquoted, error texts with their ``ERR`` prefix).

What the browser cannot run is answered with a note instead of a wrong reply:

* Lua (``EVAL``, ``EVALSHA``, ``SCRIPT``, ``FUNCTION``, ``FCALL``): fakeredis runs Lua through
  ``lupa``, which has no WebAssembly build;
* blocking commands (``BLPOP`` and friends, ``XREAD BLOCK``, ``SUBSCRIBE``, ``MONITOR``): one thread
  that waits would freeze the console;
* server commands fakeredis does not emulate (``INFO``, ``OBJECT``, ``CONFIG``, ``WAIT`` ...).

Each command costs what it costs on Redis (``INCR`` O(1) ...) plus the formatting, O(reply size).
"""

from __future__ import annotations

from typing import Any

import fakeredis
import redis

from redis_course.core.compat import FAKE_SERVER_VERSION, raw_fake_connection_class
from redis_course.core.transcripts import TranscriptSyntaxError, format_reply, split_args

LUA = {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "SCRIPT", "FUNCTION", "FCALL", "FCALL_RO"}
BLOCKING = {
    "BLPOP",
    "BRPOP",
    "BRPOPLPUSH",
    "BLMOVE",
    "BLMPOP",
    "BZPOPMIN",
    "BZPOPMAX",
    "BZMPOP",
    "SUBSCRIBE",
    "PSUBSCRIBE",
    "SSUBSCRIBE",
    "MONITOR",
}
SERVER = {
    "INFO",
    "OBJECT",
    "CONFIG",
    "WAIT",
    "WAITAOF",
    "DEBUG",
    "MEMORY",
    "SLOWLOG",
    "LATENCY",
    "MODULE",
    "CLUSTER",
    "REPLICAOF",
    "SLAVEOF",
    "FAILOVER",
    "SYNC",
    "PSYNC",
    "BGREWRITEAOF",
    "SHUTDOWN",
    "ACL",
    "COMMAND",
    "LOLWUT",
    "RESET",
    "READONLY",
    "READWRITE",
    "ASKING",
}
CLIENTS = 2
_RawConnection = raw_fake_connection_class()


def _blocks(args: list[str]) -> bool:
    name = args[0].upper()
    if name in BLOCKING:
        return True
    return name in ("XREAD", "XREADGROUP") and any(a.upper() == "BLOCK" for a in args[1:])


class Session:
    """A fresh server (Redis 7.0 as the course emulates it) and ``CLIENTS`` connections to it."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every key and every client's state (MULTI, WATCH)."""
        for client in getattr(self, "clients", []):
            client.close()
        self.server = fakeredis.FakeServer(version=FAKE_SERVER_VERSION)
        self.clients = []
        self.in_tx = [False] * CLIENTS
        for _ in range(CLIENTS):
            client = fakeredis.FakeRedis(
                server=self.server,
                version=FAKE_SERVER_VERSION,
                protocol=2,
                decode_responses=True,
                connection_class=_RawConnection,
                single_connection_client=True,
            )
            client.response_callbacks = {}
            self.clients.append(client)

    def prompt(self, client: int) -> str:
        """``redis> `` or, inside MULTI, ``redis(TX)> `` (as redis-cli marks a transaction)."""
        return "redis(TX)> " if self.in_tx[client] else "redis> "

    def run(self, line: str, client: int = 0) -> dict[str, Any]:
        """Run one command line as ``client``: ``{"prompt", "command", "name", "lines", "note", "next"}``.

        ``lines`` is what redis-cli prints; ``note`` is ``None`` or why nothing ran
        (``"lua"``, ``"blocking"``, ``"server"``) or that Python failed (``"internal"``);
        ``next`` is the prompt of the client's next command."""
        out = self._run(line, client)
        out["next"] = self.prompt(client)
        return out

    def _run(self, line: str, client: int) -> dict[str, Any]:
        prompt = self.prompt(client)
        out: dict[str, Any] = {"prompt": prompt, "command": line, "lines": [], "note": None, "name": ""}
        try:
            args = split_args(line)
        except TranscriptSyntaxError:
            out["lines"] = ["Invalid argument(s)"]  # what redis-cli prints; the note says why, in the reader's language
            out["note"] = "syntax"
            return out
        if not args:
            return out
        name = out["name"] = args[0].upper()
        if name in LUA:
            out["note"] = "lua"
            return out
        if _blocks(args):
            out["note"] = "blocking"
            return out
        try:
            reply = self.clients[client].execute_command(*args)
        except redis.exceptions.ResponseError as exc:
            reply = exc
            if "unknown command" in str(exc).lower():
                if name in SERVER:
                    out["note"] = "server"
                    return out
                reply = redis.exceptions.ResponseError(unknown_command(args))
        except Exception as exc:  # a fakeredis gap must not kill the console: show it as one line
            out["note"] = "internal"
            out["lines"] = [f"{type(exc).__name__}: {exc}"]
            return out
        out["lines"] = format_reply(reply)
        if name == "MULTI" and not isinstance(reply, Exception):
            self.in_tx[client] = True
        elif name in ("EXEC", "DISCARD"):
            self.in_tx[client] = False
        return out

    def run_many(self, lines: list[str], client: int = 0) -> list[dict[str, Any]]:
        return [self.run(line, client) for line in lines if line.strip()]


def unknown_command(args: list[str]) -> str:
    """Redis 7's reply to a command it does not know (server.c, processCommand): the name as typed and
    at most 128 characters of it, then the arguments quoted until 128 characters of them are shown."""
    shown = ""
    for arg in args[1:]:
        if len(shown) >= 128:
            break
        shown += f"'{arg[: 128 - len(shown)]}' "
    text = f"unknown command '{args[0][:128]}', with args beginning with: {shown}"
    return "ERR " + text.replace("\r", " ").replace("\n", " ")


_sessions: dict[int, Session] = {}


def open_session(sid: int) -> None:
    """The browser's entry points: one session per console on the page, by number."""
    _sessions[sid] = Session()


def run_lines(sid: int, client: int, lines: list[str]) -> list[dict[str, Any]]:
    if sid not in _sessions:
        open_session(sid)
    return _sessions[sid].run_many(list(lines), client)


def reset_session(sid: int) -> None:
    open_session(sid)
