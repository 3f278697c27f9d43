"""Faults applied from outside the student's process: a RESP proxy on Unix sockets.

The student's Redis client (inside the box) connects to :attr:`FaultProxy.listen_path`; each of its
connections gets a connection of its own to the run's private Redis at ``upstream_path`` (so MULTI,
WATCH, HELLO, AUTH and SELECT state stays per client, exactly as without the proxy).  The grader's
own connection goes to the server directly, never through here.

What the grader can do to the student's traffic:

* :meth:`FaultProxy.arm_crash` -- let ``n`` more *counted units* through, then, at the next one,
  behave as if the student's process died at that point: the unit is not forwarded,
  ``on_crash(info)`` is called (the grader kills the process from outside, before its clients can
  see a closed connection), then the connection that sent it and every other student connection
  are closed, and new connections are refused.
* :meth:`FaultProxy.pause` / :meth:`FaultProxy.resume` -- a server that stops answering: commands
  are neither forwarded nor answered; clients time out by their own socket timeouts.
* :meth:`FaultProxy.set_delay` -- a slow server: every reply reaches the student that much later
  (the command itself runs at once).
* :meth:`FaultProxy.hold_after` / :meth:`FaultProxy.release` -- a chosen interleaving: once one
  owner's request named a given key, that owner's next request on the run's keys waits here, not
  forwarded, until the grader (which has written in between, on its own connection) releases it.

What the grader can read: :meth:`FaultProxy.stats` (every connection together) and
:meth:`FaultProxy.traffic` (the counted units one owner's connections sent, by command: what a
lab test needs to hold a promise such as "one script, one round trip").

A *unit* is one command outside MULTI, or one whole MULTI ... EXEC (or DISCARD) block, counted when
its EXEC (DISCARD) arrives; it counts toward the crash budget only when one of its arguments (the
command name aside) starts with ``prefix``.  A crash at a block's EXEC leaves the EXEC unforwarded:
the server discards the queued transaction when the connection closes, so a block is all or nothing.
Commands pipelined in one write are separate units: a crash can fall between them, as when a client
dies in the middle of a pipeline.

Requests (client to server) must be what redis-py sends: RESP arrays of bulk strings.  Anything else
-- an inline command, a nested array, a negative or oversized length, more than ``max_args``
arguments, a request over ``max_request_bytes`` -- closes that connection at once; the others keep
being served.  Replies (server to client) are forwarded as they come, unparsed.

Cost: one thread (a ``selectors`` loop) for every connection.  Per command: one parse (a ``find`` of
CRLF and an ``int()`` per header line; bulk data is skipped by its length, never copied, except the
command name, at most 32 bytes, and a ``startswith`` of the prefix per argument) and one forward (the
complete requests of one read go out in one ``send``); per reply chunk: one ``recv`` and one ``send``
(plus a timestamp when a delay is set).

Memory is bounded whatever the student sends: per connection at most ``max_request_bytes`` of a
partial request plus as much waiting to go upstream, and ``max_pending_reply_bytes`` of replies the
client has not read (past that the proxy stops reading both the client and its server connection);
at most ``max_connections`` connections, and ``max_buffered_bytes`` over all of them.  The server's
own output buffer for a client that never reads is the server's to bound (``client-output-buffer-limit``).
"""

from __future__ import annotations

import collections
import errno
import os
import selectors
import socket
import threading
import time
from typing import Any, Callable

__all__ = ["FaultProxy"]

READ_CHUNK = 256 << 10  # bytes per recv()
HEADER_MAX = 24  # "*1048576\r\n", "$536870912\r\n" fit; a longer header line is refused
NAME_MAX = 32  # bytes of a command name kept for stats and MULTI/EXEC tracking
STATS_NAMES = 64  # distinct command names counted; the rest count as "(other)"
DRAIN_SECONDS = 2.0  # how long a closed client's server connection may take to finish
CONNECT_TIMEOUT = 2.0  # connecting to the server (a Unix socket: immediate unless its backlog is full)

_READ, _WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE
_LISTEN, _WAKE = object(), object()
_RETRY = (BlockingIOError, InterruptedError)
_MULTI, _EXEC, _DISCARD = b"MULTI", b"EXEC", b"DISCARD"


class _Conn:
    """One student connection and its own server connection, with their buffers and parse state."""

    __slots__ = (
        "id",
        "client",
        "up",
        "inbuf",
        "up_out",
        "up_off",
        "out",
        "out_bytes",
        "pos",
        "req_start",
        "nargs",
        "seen",
        "bulk",
        "name",
        "marked",
        "in_multi",
        "multi_marked",
        "retired",
        "up_eof",
        "drain_until",
        "discarded",
        "masks",
        "owner",
        "waiting",
        "named",
        "held",
    )

    def __init__(self, cid: int, client: socket.socket, up: socket.socket) -> None:
        self.id = cid
        self.client: socket.socket | None = client
        self.up: socket.socket | None = up
        self.inbuf = bytearray()  # bytes read from the client, not yet forwarded
        self.up_out = bytearray()  # approved requests not yet accepted by the server's socket
        self.up_off = 0  # of which up_out[:up_off] is already sent
        self.out: collections.deque = collections.deque()  # [due, bytes] replies for the client
        self.out_bytes = 0
        self.pos = 0  # parse position in inbuf
        self.req_start = 0  # where the request being parsed starts in inbuf
        self.nargs = -1  # arguments of that request (-1: expecting "*<n>")
        self.seen = 0  # of which complete
        self.bulk = -1  # length of the bulk whose data starts at pos (-1: expecting "$<n>")
        self.name = b""
        self.marked = False
        self.in_multi = False
        self.multi_marked = False
        self.retired = False  # client gone: the server connection only finishes what it got
        self.up_eof = False
        self.drain_until = 0.0
        self.discarded = 0
        self.masks = [0, 0]  # registered event masks: client, server
        self.owner: object = None  # the student process it belongs to (``owner_of``)
        self.waiting = False  # one command sent apart: the next waits for its reply
        self.named = False  # the request being parsed names the key of a hold (``hold_after``)
        self.held = False  # a request waits at inbuf[pos:] until ``release``


class FaultProxy:
    """RESP proxy between one box's student processes and their Redis (Unix sockets both sides).

    ``start()`` binds ``listen_path`` (mode ``socket_mode``) and returns once it listens; the control
    methods may be called from any thread (those that change what happens to traffic take effect
    before they return).  ``on_crash(info)`` is called once per crash, in the proxy's thread: keep it
    short (a kill); an exception from it is kept in ``stats()["on_crash_error"]``."""

    def __init__(
        self,
        listen_path: str,
        upstream_path: str,
        prefix: str | bytes,
        *,
        max_request_bytes: int = 64 << 20,
        max_args: int = 1 << 20,
        max_pending_reply_bytes: int = 64 << 20,
        on_crash: Callable[[dict], Any] | None = None,
        max_connections: int = 256,
        max_buffered_bytes: int = 512 << 20,
        socket_mode: int | None = 0o777,
        owner_of: Callable[[int | None], Any] | None = None,
    ) -> None:
        self.listen_path = str(listen_path)
        self.upstream_path = str(upstream_path)
        self.prefix = prefix.encode() if isinstance(prefix, str) else bytes(prefix)
        self.max_request_bytes = int(max_request_bytes)
        self.max_args = int(max_args)
        self.max_pending_reply_bytes = int(max_pending_reply_bytes)
        self.max_connections = int(max_connections)
        self.max_buffered_bytes = int(max_buffered_bytes)
        self.socket_mode = socket_mode
        self.on_crash = on_crash
        self.owner_of = owner_of  # peer pid -> owner (a student process); None refuses the connection
        self._owned: dict[Any, list] = {}  # owner -> [budget, units done] (arm_crash with an owner)
        self._holds: dict[Any, dict] = {}  # owner -> {"key", "state", "conn"} (hold_after)
        self._crashed_owners: set = set()
        self.crashed = False
        self.crash_info: dict | None = None
        self._budget: int | None = None
        self._units_done = 0
        self._paused = False
        self._delay = 0.0
        self._conns: dict[int, _Conn] = {}
        self._next_id = 0
        self._buffered = 0  # inbuf + up_out + out over every connection
        self._sel: selectors.BaseSelector | None = None
        self._listener: socket.socket | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._calls: collections.deque = collections.deque()
        self._lock = threading.RLock()  # on_crash may call stats() or reset() from the loop
        self._starved = False  # a connection waits for room under max_buffered_bytes
        self._closed = False
        self._accept_retry = 0.0  # out of file descriptors: accept again at this time
        self._drained = threading.Condition(self._lock)
        self._by_command: dict[bytes, int] = {}
        self._other_commands = 0
        self._traffic: dict[Any, dict] = {}  # owner -> its connections, round trips, commands (``traffic``)
        self._stats: dict[str, Any] = {
            "connections": 0,
            "refused_connections": 0,
            "commands": 0,
            "units": 0,
            "counted_units": 0,
            "requests_refused": collections.Counter(),
            "peak_pending_reply_bytes": 0,
            "peak_buffered_bytes": 0,
            "crashes": 0,
            "on_crash_error": None,
            "errors": 0,
            "last_error": None,
        }

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "FaultProxy":
        """Bind and listen, then run the loop in one daemon thread."""
        if self._thread is not None:
            return self
        try:
            os.unlink(self.listen_path)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.listen_path)
        if self.socket_mode is not None:
            os.chmod(self.listen_path, self.socket_mode)
        listener.listen(128)
        listener.setblocking(False)
        self._listener = listener
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(listener, _READ, _LISTEN)
        self._sel.register(self._wake_r, _READ, _WAKE)
        self._thread = threading.Thread(target=self._run, name=f"faultproxy:{self.listen_path}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Close every connection and the listening socket, stop the thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        thread = self._thread
        if thread is not None and thread.is_alive():
            if threading.current_thread() is thread:
                return  # called from on_crash: the loop cleans up when it returns
            self._wake()
            thread.join(5)
        if thread is None or not thread.is_alive():
            self._cleanup()

    def _cleanup(self) -> None:
        with self._lock:
            for conn in list(self._conns.values()):
                self._drop(conn)
            for s in (self._listener, self._wake_r, self._wake_w):
                if s is not None:
                    s.close()
            if self._sel is not None:
                self._sel.close()
            if self._listener is not None:
                try:
                    os.unlink(self.listen_path)
                except OSError:
                    pass
            self._listener = self._wake_r = self._wake_w = None

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ control (any thread)

    def arm_crash(self, units: int | None, owner: Any = None) -> None:
        """Forward ``units`` more counted units, crash at the next one; ``None`` disarms.  With an
        ``owner``, only that owner's connections count and crash (the other owners go on)."""
        if units is not None and units < 0:
            raise ValueError("units must be >= 0 or None")

        def arm() -> None:
            if owner is None:
                self._budget, self._units_done = units, 0
            elif units is None:
                self._owned.pop(owner, None)
            else:
                self._owned[owner] = [units, 0]

        self._in_loop(arm)

    def hold_after(self, owner: Any, key: str | bytes) -> None:
        """Once a request of ``owner``'s names ``key`` (an argument equal to it, the command name
        aside), hold ``owner``'s next request that names a key of the run: it is neither forwarded
        nor answered until :meth:`release` (its connection's later requests wait behind it).  One
        request is held, once; :meth:`hold_state` says whether it is.  What the server has run then
        is everything the owner sent before it, the request naming ``key`` included (the owner sent
        the held request after that request's reply, unless it pipelined them)."""
        key = key.encode() if isinstance(key, str) else bytes(key)

        def arm() -> None:
            self._holds[owner] = {"key": key, "state": "armed", "conn": None}

        self._in_loop(arm)

    def hold_state(self, owner: Any) -> str | None:
        """``"armed"`` (``key`` not named yet), ``"named"`` (waiting for the request to hold),
        ``"held"``, or None (no hold, or released)."""
        with self._lock:
            hold = self._holds.get(owner)
            return hold["state"] if hold is not None else None

    def release(self, owner: Any) -> None:
        """Forward the held request and what came after it; disarm a hold that has not fired."""

        def do() -> None:
            hold = self._holds.pop(owner, None)
            conn = hold["conn"] if hold is not None else None
            if conn is not None and conn.held:
                conn.held = False
                if conn.client is not None:
                    self._parse(conn)
                    self._sync(conn)

        self._in_loop(do)

    def crashed_owner(self, owner: Any) -> bool:
        """Whether a crash armed for ``owner`` fired (until :meth:`reset`)."""
        return owner in self._crashed_owners

    def reset(self) -> None:
        """Disarm, clear ``crashed``/``crash_info`` and drop every student connection (between tests),
        server connections still draining after a crash included (:meth:`wait_drained` first to be
        sure the server has run what was forwarded).  A pause and a delay stay as they are."""

        def do() -> None:
            for conn in list(self._conns.values()):
                self._drop(conn)
            self._budget, self._units_done = None, 0
            self._owned.clear()
            self._holds.clear()
            self._crashed_owners.clear()
            self._traffic.clear()
            self.crashed, self.crash_info = False, None

        self._in_loop(do)

    def pause(self) -> None:
        """From now on no student command is forwarded (nor answered) until :meth:`resume`."""

        def do() -> None:
            self._paused = True
            self._sync_all()

        self._in_loop(do)

    def resume(self) -> None:
        def do() -> None:
            self._paused = False
            for conn in list(self._conns.values()):
                if conn.client is not None and conn.inbuf:
                    self._parse(conn)
            self._sync_all()

        self._in_loop(do)

    def set_delay(self, seconds: float) -> None:
        """Every reply read from the server from now on reaches its client ``seconds`` later (0: none)."""
        if seconds < 0:
            raise ValueError("the delay must be >= 0")
        self._delay = float(seconds)

    def wait_drained(self, timeout: float = 5.0) -> bool:
        """Wait until every server connection whose client is gone has been closed by the server,
        i.e. the server has read (and run) everything forwarded on it.  After a crash: what was
        forwarded is applied once this returns True."""
        deadline = time.monotonic() + timeout
        with self._drained:
            while any(c.retired for c in self._conns.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._drained.wait(min(left, 0.05))
        return True

    def stats(self) -> dict:
        """Counters (a copy): ``commands`` forwarded, ``units`` and ``counted_units`` seen,
        ``connections`` accepted, ``open_connections`` (students'), ``server_connections``,
        ``refused_connections`` (after a crash or over ``max_connections``), ``requests_refused`` by
        reason, ``by_command`` (at most 64 names),
        ``buffered_bytes`` now and ``peak_buffered_bytes``, ``pending_reply_bytes`` now (the largest
        over connections) and ``peak_pending_reply_bytes``, ``crashes``, ``paused``, ``delay``."""
        with self._lock:
            s = dict(self._stats)
            s["requests_refused"] = dict(s["requests_refused"])
            s["by_command"] = {k.decode("ascii", "replace"): v for k, v in self._by_command.items()}
            if self._other_commands:
                s["by_command"]["(other)"] = self._other_commands
            conns = list(self._conns.values())
            s["open_connections"] = sum(1 for c in conns if c.client is not None)
            s["server_connections"] = sum(1 for c in conns if c.up is not None)
            s["buffered_bytes"] = self._buffered
            s["pending_reply_bytes"] = max((c.out_bytes for c in conns), default=0)
            s["paused"], s["delay"], s["crashed"] = self._paused, self._delay, self.crashed
            s["armed"] = self._budget is not None
            return s

    def traffic(self, owner: Any) -> dict:
        """What ``owner``'s connections sent since it connected or since :meth:`reset` (a copy):

        * ``connections`` opened; ``round_trips``: reads from a client that completed at least one
          request (a pipeline or a MULTI block sent in one write is one, each command sent apart is
          one more); ``commands`` by name, the handshake's (HELLO, CLIENT, AUTH, SELECT) included;
        * ``units`` and ``by_command``: the counted units on the run's keys, forwarded or cut by a
          crash, a MULTI ... EXEC block counted once under ``EXEC`` (``DISCARD``), a pipeline without
          MULTI as many units as it has commands.

        At most 64 names each, the rest as "(other)"."""

        def names(d: dict) -> dict:
            return {k.decode("ascii", "replace"): v for k, v in d.items()}

        with self._lock:
            t = self._traffic.get(owner) or {"connections": 0, "round_trips": 0, "commands": {}, "units": {}}
            return {
                "connections": t["connections"],
                "round_trips": t["round_trips"],
                "commands": names(t["commands"]),
                "units": sum(t["units"].values()),
                "by_command": names(t["units"]),
            }

    # ------------------------------------------------------------------ the loop

    def _in_loop(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the proxy's thread and wait for it (directly when the loop is not running)."""
        thread = self._thread
        if thread is None or not thread.is_alive() or threading.current_thread() is thread:
            with self._lock:
                fn()
            return
        done = threading.Event()
        failed: list[BaseException] = []
        self._calls.append((fn, done, failed))
        self._wake()
        if not done.wait(10):
            raise RuntimeError("the fault proxy's thread did not answer")
        if failed:
            raise failed[0]

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")  # type: ignore[union-attr]
        except (BlockingIOError, OSError):
            pass  # already woken (a full pipe) or closed

    def _run(self) -> None:
        sel = self._sel
        assert sel is not None
        try:
            while not self._closed:
                events = sel.select(self._timeout())
                with self._lock:
                    for key, mask in events:
                        data = key.data
                        if data is _WAKE:
                            self._on_wake()
                        elif data is _LISTEN:
                            self._guarded(self._accept)
                        else:
                            self._event(data[0], data[1], mask)
                    self._guarded(self._timers)
        finally:
            if self._closed:
                self._cleanup()

    def _guarded(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the loop serves the other connections on
            self._stats["errors"] += 1
            self._stats["last_error"] = repr(e)

    def _event(self, conn: _Conn, side: int, mask: int) -> None:
        try:
            if side == 0:
                if mask & _WRITE and conn.client is not None:
                    self._flush_client(conn)
                if mask & _READ and conn.client is not None:
                    self._read_client(conn)
            else:
                if mask & _WRITE and conn.up is not None:
                    self._flush_up(conn)
                if mask & _READ and conn.up is not None:
                    self._read_up(conn)
            self._sync(conn)
        except Exception as e:  # noqa: BLE001 - one broken connection must not stop the others
            self._stats["errors"] += 1
            self._stats["last_error"] = repr(e)
            self._drop(conn)

    def _on_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):  # type: ignore[union-attr]
                pass
        except (BlockingIOError, OSError):
            pass
        while self._calls:
            fn, done, failed = self._calls.popleft()
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - raised again in the caller's thread
                failed.append(e)
            finally:
                done.set()

    def _timeout(self) -> float | None:
        """Seconds until the next delayed reply is due, a drain ends or accepting may resume."""
        nxt = None
        now = time.monotonic()
        for conn in self._conns.values():
            if conn.out and conn.client is not None and conn.out[0][0] > now:
                due = conn.out[0][0]
                nxt = due if nxt is None else min(nxt, due)
            if conn.retired:
                nxt = conn.drain_until if nxt is None else min(nxt, conn.drain_until)
        if self._accept_retry:
            nxt = self._accept_retry if nxt is None else min(nxt, self._accept_retry)
        if nxt is None:
            return None
        return max(0.0, nxt - now)

    def _timers(self) -> None:
        now = time.monotonic()
        for conn in list(self._conns.values()):
            if conn.retired and now >= conn.drain_until:
                self._drop(conn)
            elif conn.client is not None and conn.out and conn.out[0][0] <= now and not conn.masks[0] & _WRITE:
                self._sync(conn)  # a delayed reply is due: the next select() sends it
        if self._starved and self._buffered < self.max_buffered_bytes:
            self._starved = False
            self._sync_all()
        if self._accept_retry and now >= self._accept_retry and self._listener is not None:
            self._accept_retry = 0.0
            self._sel.register(self._listener, _READ, _LISTEN)  # type: ignore[union-attr]

    # ------------------------------------------------------------------ connections

    def _accept(self) -> None:
        for _ in range(64):
            try:
                client, _addr = self._listener.accept()  # type: ignore[union-attr]
            except _RETRY:
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._sel.unregister(self._listener)  # type: ignore[union-attr]
                    self._accept_retry = time.monotonic() + 0.1
                return
            if (
                self.crashed
                or self._closed
                or sum(1 for c in self._conns.values() if c.client is not None) >= self.max_connections
            ):
                self._stats["refused_connections"] += 1
                client.close()
                continue
            owner = None
            if self.owner_of is not None:  # whose connection it is: refused when nobody's, or a crashed one's
                owner = self.owner_of(_peer_pid(client))
                if owner is None or owner in self._crashed_owners:
                    self._stats["refused_connections"] += 1
                    client.close()
                    continue
            try:
                up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            except OSError:
                client.close()
                continue
            try:
                up.settimeout(CONNECT_TIMEOUT)
                up.connect(self.upstream_path)
            except OSError:
                up.close()
                client.close()
                self._stats["refused_connections"] += 1
                continue
            up.setblocking(False)
            client.setblocking(False)
            self._next_id += 1
            conn = _Conn(self._next_id, client, up)
            conn.owner = owner
            self._conns[conn.id] = conn
            self._stats["connections"] += 1
            if owner is not None:
                self._owner_traffic(owner)["connections"] += 1
            self._sync(conn)

    def _sync(self, conn: _Conn) -> None:
        """Register the events each side of ``conn`` needs now (a syscall only when they change)."""
        sel = self._sel
        room = self._buffered < self.max_buffered_bytes
        if conn.client is not None:
            want = 0
            if (
                not self._paused
                and not conn.held
                and not conn.up_eof
                and conn.up is not None
                and len(conn.up_out) - conn.up_off < self.max_request_bytes
                and conn.out_bytes < self.max_pending_reply_bytes
            ):
                if room:
                    want |= _READ
                else:
                    self._starved = True
            if conn.out and conn.out[0][0] <= time.monotonic():
                want |= _WRITE
            self._modify(sel, conn.client, conn, 0, want)
        if conn.up is not None:
            want = 0
            if not conn.up_eof:
                if conn.retired or (conn.out_bytes < self.max_pending_reply_bytes and room):
                    want |= _READ
                elif not room:
                    self._starved = True
            if conn.up_out:
                want |= _WRITE
            self._modify(sel, conn.up, conn, 1, want)

    @staticmethod
    def _modify(sel, sock: socket.socket, conn: _Conn, side: int, want: int) -> None:
        have = conn.masks[side]
        if want == have:
            return
        if not have:
            sel.register(sock, want, (conn, side))
        elif not want:
            sel.unregister(sock)
        else:
            sel.modify(sock, want, (conn, side))
        conn.masks[side] = want

    def _sync_all(self) -> None:
        for conn in list(self._conns.values()):
            self._sync(conn)

    def _close_side(self, conn: _Conn, side: int) -> None:
        sock = conn.client if side == 0 else conn.up
        if sock is None:
            return
        if conn.masks[side]:
            try:
                self._sel.unregister(sock)  # type: ignore[union-attr]
            except (KeyError, ValueError):
                pass
            conn.masks[side] = 0
        try:
            sock.close()
        except OSError:
            pass
        if side == 0:
            conn.client = None
            self._buffered -= len(conn.inbuf) + conn.out_bytes
            conn.inbuf = bytearray()
            conn.out.clear()
            conn.out_bytes = 0
        else:
            conn.up = None
            self._buffered -= len(conn.up_out) - conn.up_off
            conn.up_out, conn.up_off = bytearray(), 0

    def _drop(self, conn: _Conn) -> None:
        """Close both sides now."""
        self._close_side(conn, 0)
        self._close_side(conn, 1)
        if self._conns.pop(conn.id, None) is not None and conn.retired:
            self._drained.notify_all()

    def _retire(self, conn: _Conn) -> None:
        """The client is gone: close it; its server connection gets what was approved, then a
        half-close, and is read (replies discarded) until the server closes it (bounded)."""
        self._close_side(conn, 0)
        if conn.up is None or conn.up_eof:
            self._drop(conn)
            return
        conn.retired = True
        conn.drain_until = time.monotonic() + DRAIN_SECONDS
        if not conn.up_out:
            self._half_close(conn)
        self._sync(conn)

    def _half_close(self, conn: _Conn) -> None:
        try:
            conn.up.shutdown(socket.SHUT_WR)  # type: ignore[union-attr]
        except OSError:
            self._drop(conn)

    def _refuse(self, conn: _Conn, reason: str) -> None:
        self._stats["requests_refused"][reason] += 1
        self._drop(conn)

    # ------------------------------------------------------------------ client side

    def _read_client(self, conn: _Conn) -> None:
        try:
            data = conn.client.recv(READ_CHUNK)  # type: ignore[union-attr]
        except _RETRY:
            return
        except OSError:
            data = b""
        if not data:
            self._retire(conn)  # the whole requests it sent were handled when they arrived
            return
        if conn.inbuf:
            conn.inbuf += data
        else:
            conn.inbuf = bytearray(data)
        self._add_buffered(len(data))
        self._parse(conn)

    def _parse(self, conn: _Conn) -> None:
        """Parse the complete requests in ``conn.inbuf``, decide each, forward the approved ones.

        The state between reads (``pos``, ``nargs``, ``seen``, ``bulk``...) lives on ``conn``, so a
        request split over many reads is parsed once, never from its start again."""
        if self._paused or conn.waiting or conn.held:
            return
        hold = self._holds.get(conn.owner) if self._holds and conn.owner is not None else None
        if hold is not None and hold["state"] == "held":
            hold = None  # another connection of the owner: only the held request waits
        hold_key = hold["key"] if hold is not None and hold["state"] == "armed" else None
        named = conn.named
        buf = conn.inbuf
        n = len(buf)
        find = buf.find
        prefix = self.prefix
        max_request = self.max_request_bytes
        pos, nargs, seen, bulk, start = conn.pos, conn.nargs, conn.seen, conn.bulk, conn.req_start
        name, marked = conn.name, conn.marked
        approved = 0  # inbuf[:approved] holds whole approved requests
        reason = None
        while True:
            if nargs < 0:  # "*<count>\r\n"
                if pos >= n:
                    break
                if buf[pos] != 0x2A:
                    reason = "not an array of bulk strings"
                    break
                eol = find(b"\r\n", pos + 1, pos + HEADER_MAX)
                if eol < 0:
                    if n - pos >= HEADER_MAX:
                        reason = "bad length"
                    break
                digits = buf[pos + 1 : eol]
                if not digits.isdigit():
                    reason = "bad length"
                    break
                nargs = int(digits)
                if nargs == 0 or nargs > self.max_args:
                    reason = "too many arguments" if nargs else "empty array"
                    break
                start, seen, bulk, name, marked, named = pos, 0, -1, b"", not prefix, False
                pos = eol + 2
            if bulk < 0:  # "$<length>\r\n"
                if pos >= n:
                    break
                if buf[pos] != 0x24:
                    reason = "not an array of bulk strings"
                    break
                eol = find(b"\r\n", pos + 1, pos + HEADER_MAX)
                if eol < 0:
                    if n - pos >= HEADER_MAX:
                        reason = "bad length"
                    break
                digits = buf[pos + 1 : eol]
                if not digits.isdigit():
                    reason = "bad length"
                    break
                bulk = int(digits)
                pos = eol + 2
                if pos - start + bulk + 2 > max_request:
                    reason = "request too large"
                    break
            end = pos + bulk
            if end + 2 > n:
                break
            if buf[end] != 13 or buf[end + 1] != 10:
                reason = "bulk string without its CRLF"
                break
            if not seen:
                name = bytes(buf[pos : min(end, pos + NAME_MAX)]).upper()
            elif not marked and buf.startswith(prefix, pos, end):
                marked = True
            if (
                seen
                and hold_key is not None
                and not named
                and end - pos == len(hold_key)
                and buf.startswith(hold_key, pos, end)
            ):
                named = True
            seen += 1
            bulk = -1
            pos = end + 2
            if seen == nargs:
                nargs = -1
                if hold is not None and hold["state"] == "named" and marked:
                    hold["state"], hold["conn"] = "held", conn  # parsed again from its start on release
                    conn.held, pos = True, start
                    break
                if not self._decide(conn, name, marked):
                    self._forward(conn, approved)  # what came before the crashing unit, nothing after
                    self._crash_close(conn)
                    return
                if not approved and conn.owner is not None:
                    self._owner_traffic(conn.owner)["round_trips"] += 1
                approved = pos
                if named and hold_key is not None:
                    hold["state"], hold_key = "named", None
                if conn.owner is not None and conn.owner in self._owned and not conn.in_multi:
                    # while a crash is armed, a pipeline without MULTI/EXEC goes one command per
                    # round trip: Redis promises nothing about running its commands together
                    conn.waiting = True
                    break
        if reason is None and nargs >= 0 and n - start > max_request:
            reason = "request too large"
        if reason is not None:
            self._forward(conn, approved)
            self._refuse(conn, reason)
            return
        conn.pos, conn.nargs, conn.seen, conn.bulk, conn.req_start = pos, nargs, seen, bulk, start
        conn.name, conn.marked, conn.named = name, marked, named
        self._forward(conn, approved)

    def _decide(self, conn: _Conn, name: bytes, marked: bool) -> bool:
        """A complete request: track MULTI blocks, count units; False: the crash fires here."""
        stats = self._stats
        if conn.in_multi:
            conn.multi_marked = conn.multi_marked or marked
            if name != _EXEC and name != _DISCARD:
                self._count(name, conn.owner)
                return True
            conn.in_multi = False
            counted, block = conn.multi_marked, True
        elif name == _MULTI:
            conn.in_multi, conn.multi_marked = True, marked
            self._count(name, conn.owner)
            return True
        else:
            counted, block = marked, False
        stats["units"] += 1
        if counted:
            stats["counted_units"] += 1
            if conn.owner is not None:
                mine = self._owner_traffic(conn.owner)["units"]
                key = name if name in mine or len(mine) < STATS_NAMES else b"(other)"
                mine[key] = mine.get(key, 0) + 1
            owned = self._owned.get(conn.owner) if conn.owner is not None else None
            if owned is not None:
                if owned[1] >= owned[0]:
                    self._fire(conn, name, block, owned)
                    return False
                owned[1] += 1
            elif self._budget is not None:
                if self._units_done >= self._budget:
                    self._fire(conn, name, block)
                    return False
                self._units_done += 1
        self._count(name, conn.owner)
        return True

    def _count(self, name: bytes, owner: Any = None) -> None:
        self._stats["commands"] += 1
        by = self._by_command
        c = by.get(name)
        if c is not None:
            by[name] = c + 1
        elif len(by) < STATS_NAMES:
            by[name] = 1
        else:
            self._other_commands += 1
        if owner is not None:
            mine = self._owner_traffic(owner)["commands"]
            if name in mine or len(mine) < STATS_NAMES:
                mine[name] = mine.get(name, 0) + 1
            else:
                mine[b"(other)"] = mine.get(b"(other)", 0) + 1

    def _owner_traffic(self, owner: Any) -> dict:
        t = self._traffic.get(owner)
        if t is None:
            t = self._traffic[owner] = {"connections": 0, "round_trips": 0, "commands": {}, "units": {}}
        return t

    def _forward(self, conn: _Conn, approved: int) -> None:
        """Move inbuf[:approved] (whole approved requests) to the server connection, sending at once."""
        if not approved or conn.up is None:
            return
        buf = conn.inbuf
        if approved == len(buf):
            chunk, conn.inbuf = buf, bytearray()
        else:
            chunk = buf[:approved]
            del buf[:approved]
        conn.pos -= approved
        conn.req_start -= approved
        if conn.up_out:
            if conn.up_off:
                del conn.up_out[: conn.up_off]
                conn.up_off = 0
            conn.up_out += chunk
        else:
            conn.up_out = chunk
        self._flush_up(conn)

    # ------------------------------------------------------------------ crash

    def _fire(self, conn: _Conn, name: bytes, block: bool, owned: list | None = None) -> None:
        self._stats["crashes"] += 1
        if owned is not None:  # one owner's crash: the others go on
            self._owned.pop(conn.owner, None)
            self._crashed_owners.add(conn.owner)
            self.crash_info = {
                "units_done": owned[1],
                "command": name,
                "connection": conn.id,
                "block": block,
                "time": time.time(),
                "owner": conn.owner,
            }
            return
        self.crashed = True
        self._budget = None
        self.crash_info = {
            "units_done": self._units_done,
            "command": name,
            "connection": conn.id,
            "block": block,
            "time": time.time(),
        }

    def _crash_close(self, conn: _Conn) -> None:
        """Call on_crash, then close the crashing connection and every other connection of its owner
        (every student connection when the crash was armed for all).

        on_crash first: the grader kills the student's process before any of its clients can see a
        closed connection and do something else about it."""
        owner = (self.crash_info or {}).get("owner")
        info = dict(self.crash_info or {})
        if self.on_crash is not None:
            try:
                self.on_crash(info)
            except Exception as e:  # noqa: BLE001 - the proxy keeps running; the error is reported
                self._stats["on_crash_error"] = repr(e)
        for other in list(self._conns.values()):
            if other.client is not None and (owner is None or other.owner is owner):
                self._retire(other)

    # ------------------------------------------------------------------ buffers

    def _add_buffered(self, n: int) -> None:
        self._buffered += n
        if self._buffered > self._stats["peak_buffered_bytes"]:
            self._stats["peak_buffered_bytes"] = self._buffered

    def _flush_up(self, conn: _Conn) -> None:
        out, off = conn.up_out, conn.up_off
        if not out:
            return
        try:
            sent = conn.up.send(memoryview(out)[off:] if off else out)  # type: ignore[union-attr]
        except _RETRY:
            return
        except OSError:  # the server closed it: what it already answered is still to be read
            self._buffered -= len(out) - off
            conn.up_out, conn.up_off = bytearray(), 0
            conn.up_eof = True
            self._server_gone(conn)
            return
        self._buffered -= sent
        if off + sent == len(out):
            conn.up_out, conn.up_off = bytearray(), 0
        else:
            conn.up_off = off + sent
        if conn.retired and not conn.up_out:
            self._half_close(conn)

    def _read_up(self, conn: _Conn) -> None:
        room = (
            READ_CHUNK
            if conn.retired
            else min(
                READ_CHUNK, self.max_buffered_bytes - self._buffered, self.max_pending_reply_bytes - conn.out_bytes
            )
        )
        if room <= 0:
            return
        try:
            data = conn.up.recv(room)  # type: ignore[union-attr]
        except _RETRY:
            return
        except OSError:
            data = b""
        if not data:
            self._server_gone(conn)
            return
        if conn.retired:  # nobody to answer: discarded, a bounded amount
            conn.discarded += len(data)
            if conn.discarded > self.max_pending_reply_bytes:
                self._drop(conn)
            return
        if conn.waiting:  # the server has run the command sent apart: the next one may go
            conn.waiting = False
            self._parse(conn)
        delay = self._delay
        if not delay and not conn.out:
            try:
                sent = conn.client.send(data)  # type: ignore[union-attr]
            except _RETRY:
                sent = 0
            except OSError:
                self._retire(conn)
                return
            if sent == len(data):
                return
            data = memoryview(data)[sent:]
        self._queue_reply(conn, data)

    def _queue_reply(self, conn: _Conn, data) -> None:
        delay = self._delay
        conn.out.append([time.monotonic() + delay if delay else 0.0, data])
        conn.out_bytes += len(data)
        self._add_buffered(len(data))
        if conn.out_bytes > self._stats["peak_pending_reply_bytes"]:
            self._stats["peak_pending_reply_bytes"] = conn.out_bytes

    def _flush_client(self, conn: _Conn) -> None:
        now = time.monotonic()
        out = conn.out
        while out and out[0][0] <= now:
            data = out[0][1]
            try:
                sent = conn.client.send(data)  # type: ignore[union-attr]
            except _RETRY:
                break
            except OSError:
                self._retire(conn)
                return
            conn.out_bytes -= sent
            self._buffered -= sent
            if sent == len(data):
                out.popleft()
            else:
                out[0][1] = memoryview(data)[sent:]
                break
        if conn.up_eof and not out:
            self._drop(conn)

    def _server_gone(self, conn: _Conn) -> None:
        """The server closed (or broke) this connection: the client gets the replies already sent
        (those still in the socket, then those buffered here), then is closed."""
        conn.up_eof = True
        up = conn.up
        if up is not None and not conn.retired and conn.client is not None:
            while conn.out_bytes < self.max_pending_reply_bytes:
                try:
                    data = up.recv(min(READ_CHUNK, self.max_pending_reply_bytes - conn.out_bytes))
                except OSError:
                    break
                if not data:
                    break
                self._queue_reply(conn, data)
        self._close_side(conn, 1)
        if conn.retired or conn.client is None or not conn.out:
            self._drop(conn)
        else:
            self._flush_client(conn)


def _peer_pid(sock: socket.socket) -> int | None:
    """The pid of the process at the other end of a Unix socket (SO_PEERCRED, in this PID namespace)."""
    import struct

    try:
        pid, _uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    except OSError:
        return None
    return pid or None
