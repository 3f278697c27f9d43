"""Lesson 07: a slow server on demand, a proxy on a Unix socket that delays what Redis says.

:class:`SlowProxy` listens on a Unix socket and forwards every connection to a Redis server's Unix
socket.  It waits ``connect_delay_s`` (``delay_s`` unless given) before it connects to the server (a
slow connect: the client's first reply comes that much later), then forwards what
the client sends at once and holds every chunk of what the server answers ``delay_s`` before passing
it on (so each reply, those of the handshake included, arrives ``delay_s`` late).  With
``refuse_auth`` it never reaches the server and answers every command with the error Redis gives a
wrong password.  ``accepted`` counts the connections it was asked for.

:func:`in_front_of` puts one in the place of a running server's socket: the server's socket file is
renamed (the server keeps listening on it, and connections already open stay direct and fast), the
proxy takes its name, so every *new* connection to that path goes through the proxy; on exit the
names are put back.  Python sockets and threads only: a few connections, for tests and lessons.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path
from typing import Iterator

WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


class SlowProxy:
    def __init__(
        self,
        listen: str | os.PathLike,
        upstream: str | os.PathLike,
        delay_s: float = 0.0,
        refuse_auth: bool = False,
        connect_delay_s: float | None = None,
    ) -> None:
        self.listen, self.upstream = str(listen), str(upstream)
        self.delay_s, self.refuse_auth = delay_s, refuse_auth
        self.connect_delay_s = delay_s if connect_delay_s is None else connect_delay_s
        self.accepted = 0
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.listen)
        os.chmod(self.listen, 0o777)  # as redis-server's --unixsocketperm 777
        self._server.listen(64)
        self._server.settimeout(0.1)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except (socket.timeout, OSError):
                continue
            with self._lock:
                self.accepted += 1
                self._sockets.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        if self.refuse_auth:
            self._refuse(client)
            return
        time.sleep(self.connect_delay_s)  # a slow connect: nothing answers before this
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(self.upstream)
        except OSError:
            client.close()
            return
        with self._lock:
            self._sockets.append(upstream)
        threading.Thread(target=self._pump, args=(client, upstream, 0.0), daemon=True).start()
        self._pump(upstream, client, self.delay_s)

    def _refuse(self, client: socket.socket) -> None:
        client.settimeout(0.2)
        while not self._stop.is_set():
            try:
                data = client.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not data:
                break
            try:
                client.sendall(WRONGPASS)
            except OSError:
                break
        client.close()

    def _pump(self, src: socket.socket, dst: socket.socket, delay_s: float) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if delay_s:
                    time.sleep(delay_s)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._stop.set()
        self._server.close()
        self._thread.join(2)
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.listen)


@contextlib.contextmanager
def in_front_of(
    socket_path: str | os.PathLike,
    delay_s: float = 0.0,
    refuse_auth: bool = False,
    connect_delay_s: float | None = None,
) -> Iterator[SlowProxy]:
    """New connections to ``socket_path`` go through a :class:`SlowProxy` for the block; connections
    already open are not touched."""
    path = Path(socket_path)
    real = path.with_name(path.name + ".real")
    os.rename(path, real)
    try:
        proxy = SlowProxy(path, real, delay_s, refuse_auth, connect_delay_s)
    except BaseException:
        os.rename(real, path)
        raise
    try:
        yield proxy
    finally:
        proxy.close()
        os.rename(real, path)
