"""Private ``redis-server`` processes that the course starts, owns and stops.

Demos that need server-wide commands (FLUSHALL, CONFIG SET, DEBUG, SHUTDOWN, restarts, persistence
settings) run them here, never on the reader's own server.  Each server gets a free port on
127.0.0.1 (or a Unix socket), its own temporary data directory, and is stopped when the ``with``
block ends, or at the latest when the Python process exits.

    with private_redis(persistence="aof-everysec") as srv:
        r = srv.client()
        r.incr(r.key("n"))
        srv.kill()           # SIGKILL: no chance to save
        srv.start()          # same data directory: what survived?
"""
from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .backend import CourseError, connect
from .l10n import _
from .messages import msg

PERSISTENCE = {
    "default": [],  # the server's built-in defaults (Redis 7: save 3600 1 300 100 60 10000, appendonly no)
    "none": ["--save", "", "--appendonly", "no"],
    "rdb": ["--save", "1 1", "--appendonly", "no"],
    "aof-everysec": ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
    "aof-always": ["--save", "", "--appendonly", "yes", "--appendfsync", "always"],
    "aof-no": ["--save", "", "--appendonly", "yes", "--appendfsync", "no"],
}

_running: set["PrivateRedis"] = set()


class RedisServerMissing(CourseError):
    """The ``redis-server`` program is not installed."""


def redis_server_binary() -> str | None:
    """Path of ``redis-server`` (``COURSE_REDIS_SERVER`` overrides), or None."""
    override = os.environ.get("COURSE_REDIS_SERVER")
    if override:  # a program that does not exist there counts as missing, not as a crash later
        return shutil.which(override)
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)


def redis_server_version() -> str | None:
    binary = redis_server_binary()
    if not binary:
        return None
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    for part in out.split():
        if part.startswith("v="):
            return part[2:]
    return out.strip() or None


def _major(version: str | None) -> int:
    try:
        return int((version or "0").split(".")[0])
    except ValueError:
        return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(eq=False)
class PrivateRedis:
    """One private redis-server.  ``start()``, ``stop()`` (clean), ``kill()`` (SIGKILL), ``client()``."""

    persistence: str = "none"
    port: int = 0
    unix_socket: bool = False
    extra_args: list[str] = field(default_factory=list)
    data_dir: Path | None = None
    proc: subprocess.Popen | None = None
    _own_dir: bool = False

    def __post_init__(self) -> None:
        if self.persistence not in PERSISTENCE:
            raise ValueError(f"persistence must be one of {sorted(PERSISTENCE)}")
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="course-redis-"))
            self._own_dir = True

    @property
    def socket_path(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir / "redis.sock"

    @property
    def password(self) -> str | None:
        """The password given with ``--requirepass`` in ``extra_args``, if any."""
        args = list(self.extra_args)
        for i, a in enumerate(args[:-1]):
            if a == "--requirepass":
                return args[i + 1]
        return None

    @property
    def url(self) -> str:
        from urllib.parse import quote

        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        if self.unix_socket:
            return f"unix://{auth}{self.socket_path}"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def command_line(self) -> list[str]:
        binary = redis_server_binary()
        if not binary:
            raise RedisServerMissing(msg("no_redis_server"))
        args = [binary, "--bind", "127.0.0.1", "--port", "0" if self.unix_socket else str(self.port),
                "--dir", str(self.data_dir), "--daemonize", "no", "--protected-mode", "no",
                "--logfile", str(Path(self.data_dir) / "redis.log"), *PERSISTENCE[self.persistence]]
        if self.unix_socket:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "777"]
        if _major(redis_server_version()) >= 7:
            # Redis 7 refuses DEBUG unless enabled; demos on a private server may use it (local clients only).
            args += ["--enable-debug-command", "local"]
        return args + list(self.extra_args)

    def start(self, timeout: float = 10.0) -> "PrivateRedis":
        """Start (or restart on the same data directory) and wait until it answers PING."""
        if self.proc and self.proc.poll() is None:
            return self
        if not self.unix_socket and not self.port:
            self.port = free_port()
        self.proc = subprocess.Popen(self.command_line(), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        _running.add(self)
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(errors="replace")
                log = Path(self.data_dir) / "redis.log"
                tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
                raise CourseError(msg("server_start_failed", port=self.port,
                                      detail=(err.strip() or " / ".join(tail) or
                                              _("exit code {code}", code=self.proc.returncode))))
            try:
                connect(self.url, owned=True, prefix="", socket_timeout=1).ping()
                return self
            except CourseError as exc:
                last = exc
                time.sleep(0.02)
        self.kill()
        raise CourseError(msg("server_start_failed", port=self.port, detail=_("no answer in {seconds:.0f} s ({last})", seconds=timeout, last=last)))

    def client(self, prefix: str | None = None, **kwargs):
        """A client for this server; it is owned, so server-wide commands are allowed."""
        return connect(self.url, owned=True, prefix=prefix, **kwargs)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop cleanly (SIGTERM: the server saves if its persistence says so)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        _running.discard(self)

    def kill(self) -> None:
        """Kill at once (SIGKILL), as a crash or a power cut would: nothing more is written."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        _running.discard(self)

    def close(self) -> None:
        """Stop and remove the data directory if the course made it."""
        self.stop()
        if self._own_dir and self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "PrivateRedis":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def private_redis(persistence: str = "none", **kwargs) -> Iterator[PrivateRedis]:
    """Start a private redis-server for the ``with`` block; it is stopped and its data removed after."""
    srv = PrivateRedis(persistence=persistence, **kwargs)
    try:
        yield srv.start()
    finally:
        srv.close()


@atexit.register
def _stop_all() -> None:
    for srv in list(_running):
        with contextlib.suppress(Exception):
            srv.kill()
            if srv._own_dir and srv.data_dir:
                shutil.rmtree(srv.data_dir, ignore_errors=True)
