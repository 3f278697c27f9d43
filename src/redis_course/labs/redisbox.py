"""The private Redis of one grading run: a ``redis-server`` started by
:class:`redis_course.servers.PrivateRedis` (the one launcher of lessons, tests and grader) when the
binary exists, else a fakeredis server process (:mod:`.fakeserver`); both on a Unix socket alone in
its folder inside the run's directory.

The redis-server runs with ACL users (the student's code gets :attr:`RunRedis.url`, the ``student``
user: no MIGRATE, REPLICAOF, CONFIG, DEBUG, MODULE, SHUTDOWN...; the grader's own connection is the
``grader`` user), ``maxmemory`` set here, and a network namespace of its own where the machine
allows (root, or bubblewrap).  ``healthy()`` / ``restart()`` let the grader recover after a student
stalled or broke it (DEBUG-free ways remain: a Lua script that never ends, memory).

``cluster=True`` (lab.yml ``redis: cluster``) starts the redis-server in cluster mode as a cluster
of one node that serves all 16384 slots: clients use it as a single server (no redirections), and
the server refuses any multi-key command, transaction or script whose keys are in different slots
(CROSSSLOT), as a real cluster does.  fakeredis has no cluster mode: its server process refuses the
same commands itself (``--cluster``: :func:`redis_course.compat.refuse_cross_slot`).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..backend import CourseError, connect
from ..servers import PrivateRedis, redis_server_binary
from . import isolation
from .isolation import unprivileged_ids

BACKENDS = ("auto", "redis-server", "fakeredis")
MAXMEMORY = "256mb"


def resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}")
    if backend == "auto":
        return "redis-server" if redis_server_binary() else "fakeredis"
    if backend == "redis-server" and not redis_server_binary():
        raise CourseError("redis-server is not installed; use --backend fakeredis")
    return backend


class RunRedis:
    """``start()``, ``client(prefix)``, ``healthy()``, ``restart()``, ``stop()``.

    ``url`` is what the student's code gets (unix://, the ``student`` user on a redis-server);
    ``admin_url`` is the grader's."""

    def __init__(self, directory: Path, backend: str = "auto", cluster: bool = False) -> None:
        self.backend = resolve_backend(backend)
        self.cluster = cluster and self.backend == "redis-server"
        self.fake_cluster = cluster and self.backend == "fakeredis"
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._fake: subprocess.Popen | None = None
        self._admin = None  # the grader's connection for FLUSHALL between tests
        self._ready = False
        self.root = os.geteuid() == 0
        self._server: PrivateRedis | None = None
        if self.backend == "redis-server":
            self._server = PrivateRedis(data_dir=self.dir, unix_socket=True, users=True, confine=True,
                                        maxmemory=MAXMEMORY, single_node_cluster=self.cluster,
                                        log_to_file=False,
                                        extra_args=["--lua-time-limit", "1000", "--loglevel", "warning"])
        else:
            sock_dir = self.socket_path.parent
            sock_dir.mkdir(parents=True, exist_ok=True)
            if self.root:
                uid, gid = unprivileged_ids()
                os.chown(sock_dir, uid, gid)
            os.chmod(self.dir, 0o711)
            os.chmod(sock_dir, 0o711)  # others may use the socket by its name, not list the folder

    @property
    def proc(self) -> subprocess.Popen | None:
        return self._server.proc if self._server is not None else self._fake

    @property
    def socket_path(self) -> Path:
        return self.dir / "sock" / "redis.sock"

    @property
    def url(self) -> str:
        """The student's URL."""
        return self._server.student_url if self._server is not None else f"unix://{self.socket_path}"

    @property
    def admin_url(self) -> str:
        return self._server.url if self._server is not None else f"unix://{self.socket_path}"

    def _fake_command(self) -> list[str]:
        argv = [sys.executable, "-I", "-S", "-c",
                "import sys; sys.path[:0] = sys.argv[1].split(':'); "
                "from redis_course.labs.fakeserver import main; main(sys.argv[2:])",
                _import_path(), str(self.socket_path), *(["--cluster"] if self.fake_cluster else []),
                *_python_paths()]
        if not self.root and isolation.mode() == "bwrap":  # fakeredis' Lua has io and os: the same walls
            sock_dir = str(self.socket_path.parent)
            argv = isolation.bwrap_command(argv, read_only=_python_paths(), writable=[sock_dir], network=False,
                                           tmp_mb=16, chdir=sock_dir)
        return argv

    def start(self, timeout: float = 10.0) -> "RunRedis":
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> "RunRedis":
        """Start the server; a fakeredis server is not waited for (see :meth:`wait_ready`)."""
        self._ready = False
        if self._server is not None:
            self._server.start(timeout=20.0)
            self._ready = True
            return self
        if self.socket_path.exists():
            self.socket_path.unlink()
        self._fake = subprocess.Popen(self._fake_command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True, cwd=self.socket_path.parent)
        return self

    def wait_ready(self, timeout: float = 10.0) -> "RunRedis":
        if self._ready:
            return self
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CourseError(f"the private {self.backend} did not start (exit code {self.proc.returncode})")
            if self.socket_path.exists() and self.healthy(timeout=0.5):
                self._ready = True
                return self
            time.sleep(0.005)
        self.stop()
        raise CourseError(f"the private {self.backend} did not answer within {timeout:g} s")

    def client(self, prefix: str, socket_timeout: float = 5.0):
        """The grader's own client (owned: server-wide commands allowed)."""
        return connect(self.admin_url, owned=True, prefix=prefix, socket_timeout=socket_timeout,
                       socket_connect_timeout=2)

    def healthy(self, timeout: float = 2.0) -> bool:
        if not self.proc or self.proc.poll() is not None:
            return False
        try:
            c = connect(self.admin_url, owned=True, prefix="", socket_timeout=timeout, socket_connect_timeout=timeout)
            ok = c.ping() and c.set("__course_probe__", "1") and c.delete("__course_probe__") == 1
            c.close()
            return bool(ok)
        except Exception:  # noqa: BLE001 - any failure means: start afresh
            return False

    def restart(self) -> None:
        self.stop()
        self.start()

    def reset(self) -> None:
        """A clean server for the next test: FLUSHALL and a write probe on the grader's own connection,
        or a restart if the server misbehaves (shut down, asleep, locked, out of memory, busy script)."""
        self.wait_ready()
        try:
            if self._admin is None:
                self._admin = connect(self.admin_url, owned=True, prefix="", socket_timeout=2,
                                      socket_connect_timeout=2)
            a = self._admin
            ok = a.flushall() and a.set("__course_probe__", "1") and a.delete("__course_probe__") == 1
        except Exception:  # noqa: BLE001
            ok = False
        if not ok or not self.proc or self.proc.poll() is not None:
            self.restart()

    def stop(self) -> None:
        if self._admin is not None:
            try:
                self._admin.close()
            except Exception:  # noqa: BLE001
                pass
            self._admin = None
        if self._server is not None:
            self._server.kill()
        elif self._fake and self._fake.poll() is None:
            try:
                os.killpg(self._fake.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._fake.wait(5)
        self._fake = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _python_paths() -> list[str]:
    from .forkserver import python_paths

    return python_paths() + _import_path().split(":")


def _import_path() -> str:
    """sys.path entries that make ``redis``, ``fakeredis`` and ``redis_course`` importable with -I -S."""
    import fakeredis
    import redis

    import redis_course

    entries = []
    for mod in (redis_course, redis, fakeredis):
        p = str(Path(mod.__file__).resolve().parents[1])
        if p not in entries:
            entries.append(p)
    # fakeredis' own dependencies (sortedcontainers, lupa, ...) live next to it
    return ":".join(entries)
