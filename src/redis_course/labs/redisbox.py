"""The private Redis of one grading run: a throwaway ``redis-server`` on a Unix socket when the
binary exists, else a fakeredis server process (:mod:`.fakeserver`) on a Unix socket.

Both listen only on a socket file inside a directory the grader made for this run, so a student's
process (which has no network) can reach its own Redis and nothing else.  When the grader runs as
root the server runs as ``nobody``.  ``healthy()`` / ``restart()`` let the grader recover after a
student sent SHUTDOWN, DEBUG SLEEP, CONFIG SET requirepass or a Lua script that never ends.

``cluster=True`` (lab.yml ``redis: cluster``) starts the redis-server in cluster mode as a cluster
of one node that serves all 16384 slots: clients use it as a single server (no redirections), and
the server refuses any multi-key command, transaction or script whose keys are in different slots
(CROSSSLOT), as a real cluster does.  fakeredis has no cluster mode: there it is a plain server.
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..backend import CourseError, connect
from ..servers import redis_server_binary

BACKENDS = ("auto", "redis-server", "fakeredis")


def unprivileged_ids() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}")
    if backend == "auto":
        return "redis-server" if redis_server_binary() else "fakeredis"
    if backend == "redis-server" and not redis_server_binary():
        raise CourseError("redis-server is not installed; use --backend fakeredis")
    return backend


class RunRedis:
    """``start()``, ``client(prefix)``, ``healthy()``, ``restart()``, ``stop()``; ``url`` is unix://..."""

    def __init__(self, directory: Path, backend: str = "auto", cluster: bool = False) -> None:
        self.backend = resolve_backend(backend)
        self.cluster = cluster and self.backend == "redis-server"
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen | None = None
        self._admin = None  # the grader's connection for FLUSHALL between tests
        self._ready = False
        self.root = os.geteuid() == 0
        if self.root:
            uid, gid = unprivileged_ids()
            os.chown(self.dir, uid, gid)
        os.chmod(self.dir, 0o711)  # others may use the socket by its name, not list the directory

    @property
    def socket_path(self) -> Path:
        return self.dir / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def _command(self) -> list[str]:
        if self.backend == "redis-server":
            return [redis_server_binary() or "redis-server", "--port", "0", "--unixsocket", str(self.socket_path),
                    "--unixsocketperm", "777", "--dir", str(self.dir), "--save", "", "--appendonly", "no",
                    "--daemonize", "no", "--logfile", "", "--loglevel", "warning", "--maxmemory", "256mb",
                    "--lua-time-limit", "1000", "--protected-mode", "no",
                    *(self._cluster_args() if self.cluster else [])]
        return [sys.executable, "-I", "-S", "-c",
                "import sys; sys.path[:0] = sys.argv[1].split(':'); "
                "from redis_course.labs.fakeserver import main; main(sys.argv[2:])",
                _import_path(), str(self.socket_path), *_python_paths()]

    def start(self, timeout: float = 10.0) -> "RunRedis":
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> "RunRedis":
        """Start the server process without waiting for it (see :meth:`wait_ready`)."""
        self._ready = False
        if self.socket_path.exists():
            self.socket_path.unlink()
        kwargs: dict = {}
        if self.root and self.backend == "redis-server":
            uid, gid = unprivileged_ids()
            kwargs.update(user=uid, group=gid, extra_groups=[])
        self.proc = subprocess.Popen(self._command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True, cwd=self.dir, **kwargs)
        return self

    def wait_ready(self, timeout: float = 10.0) -> "RunRedis":
        if getattr(self, "_ready", False):
            return self
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CourseError(f"the private {self.backend} did not start (exit code {self.proc.returncode})")
            if self.socket_path.exists() and self.cluster:
                self._assign_slots()
            if self.socket_path.exists() and self.healthy(timeout=0.5):
                self._ready = True
                return self
            time.sleep(0.005)
        self.stop()
        raise CourseError(f"the private {self.backend} did not answer within {timeout:g} s")

    def _cluster_args(self) -> list[str]:
        # the cluster bus needs a TCP port (default: port + 10000, i.e. 10000 for every server with
        # --port 0): a free one, on 127.0.0.1 only; clients still use only the Unix socket
        from ..servers import free_port

        return ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--bind", "127.0.0.1",
                "--cluster-port", str(free_port())]

    def _assign_slots(self) -> None:
        """Cluster mode: give this one node every slot (once; nodes.conf keeps them across restarts).
        The node serves commands when its cluster_state turns ok, about 2 s after it started."""
        try:
            c = connect(self.url, owned=True, prefix="", socket_timeout=0.5, socket_connect_timeout=0.5)
            if int(c.cluster("info").get("cluster_slots_assigned", 0)) == 0:
                c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            c.close()
        except Exception:  # noqa: BLE001 - not up yet: the start loop tries again
            pass

    def client(self, prefix: str, socket_timeout: float = 5.0):
        """The grader's own client (owned: server-wide commands allowed)."""
        return connect(self.url, owned=True, prefix=prefix, socket_timeout=socket_timeout,
                       socket_connect_timeout=2)

    def healthy(self, timeout: float = 2.0) -> bool:
        if not self.proc or self.proc.poll() is not None:
            return False
        try:
            c = connect(self.url, owned=True, prefix="", socket_timeout=timeout, socket_connect_timeout=timeout)
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
                self._admin = connect(self.url, owned=True, prefix="", socket_timeout=2, socket_connect_timeout=2)
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
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(5)
        self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _python_paths() -> list[str]:
    from .sandbox import python_paths

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
