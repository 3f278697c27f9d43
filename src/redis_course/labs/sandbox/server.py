"""The box's Redis: a ``redis-server`` (:class:`redis_course.core.servers.PrivateRedis`, the one launcher
of lessons, tests and grader) when the binary exists, else a fakeredis server process
(:mod:`.fakeserver`); on a Unix socket alone in a folder of the grader's, inside the box's walls.

The server runs under the same walls as the student's processes (:class:`ServerWalls`: bubblewrap,
no network, nothing of the machine but the system folders and what it needs, the box's cgroup, a
uid of its own when the grader is root) but in namespaces of its own: the student's processes can
neither see, signal nor trace it.  They reach it only through the box's fault proxy, as the
``student`` ACL user on a redis-server (no CONFIG, DEBUG, MODULE, MIGRATE, REPLICAOF, SHUTDOWN,
ACL, CLIENT KILL...); the grader's own checks go straight to its socket as the ``grader`` user.

Limits that hold against one command: ``maxmemory``, ``proto-max-bulk-len`` (no single value
larger), ``client-query-buffer-limit`` and the output-buffer limit of normal clients (no reply
held for a client that does not read it), and the box's cgroup (memory, processes, CPU) around it;
a fakeredis server, which has no maxmemory, gets an address-space limit.

``cluster=True`` (lab.yml ``redis: cluster``) starts the redis-server in cluster mode as a cluster
of one node that serves all 16384 slots: clients use it as a single server (no redirections), and
the server refuses any multi-key command, transaction or script whose keys are in different slots
(CROSSSLOT), as a real cluster does.  fakeredis has no cluster mode: its server process refuses the
same commands itself (``--cluster``: :func:`redis_course.core.compat.refuse_cross_slot`).
"""

from __future__ import annotations

import os
import signal
import shutil
import subprocess
import time
from pathlib import Path

from ...core.backend import CourseError, connect
from ...core.servers import PrivateRedis, redis_server_binary
from . import launch as ln

BACKENDS = ("auto", "redis-server", "fakeredis")
MAXMEMORY = "256mb"
#: per-command and per-client bounds of the box's redis-server (each far above what a lab needs)
SERVER_LIMITS = [
    "--proto-max-bulk-len",
    "16mb",
    "--client-query-buffer-limit",
    "32mb",
    "--client-output-buffer-limit",
    "normal",
    "64mb",
    "16mb",
    "10",
    "--maxclients",
    "256",
    "--lua-time-limit",
    "1000",
    "--loglevel",
    "warning",
]
FAKE_MEMORY_MB = 1024  # address space of a fakeredis server (it has no maxmemory)


def resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}")
    if backend == "auto":
        return "redis-server" if redis_server_binary() else "fakeredis"
    if backend == "redis-server" and not redis_server_binary():
        raise CourseError("redis-server is not installed; use --backend fakeredis")
    return backend


class ServerWalls:
    """How the box's server is started: through :data:`.launch.LAUNCHER` (the box's cgroup, a uid
    of its own when root, resource limits), under bubblewrap where the box uses it."""

    def __init__(
        self, mode: str, launch: "ln.Launch", rlimits: dict[str, int], read_only: list[str] = (), hide: list[str] = ()
    ) -> None:
        self.mode, self.launch, self.rlimits = mode, launch, rlimits
        self.read_only, self.hide = list(read_only), list(hide)

    @property
    def uid(self) -> int | None:
        return self.launch.uid

    def wrap(
        self,
        argv: list[str],
        srv: PrivateRedis | None = None,
        writable: list[str] = (),
        scratch: list[str] = (),
        files: list[str] = (),
    ) -> list[str]:
        if srv is not None:  # a redis-server: its socket folder writable, its data folder a tmpfs
            writable = [str(srv.socket_path.parent)]
            scratch = [str(srv.data_dir)]
            files = [
                str(Path(srv.data_dir) / n) for n in ("users.conf", "nodes.conf") if (Path(srv.data_dir) / n).exists()
            ]
        if self.mode == "bwrap":
            program = os.path.dirname(os.path.realpath(argv[0]))  # a redis-server outside /usr (COURSE_REDIS_SERVER)
            args = ln.bwrap_args(self.launch, read_only=[*self.read_only, program], hide=self.hide, hostname="redis")
            for d in scratch:
                args += ["--perms", "0700", "--size", str(64 << 20), "--tmpfs", d]
            for f in files:
                args += ["--ro-bind", f, f]
            for w in writable:
                args += ["--bind", w, w]
            argv = args + ["--", *argv]
        return self.launch.command(argv, self.rlimits)


class RunRedis:
    """``start()``, ``client(prefix)``, ``healthy()``, ``restart()``, ``reset()``, ``pause()``,
    ``resume()``, ``stop()``.

    ``socket_path`` is where the server listens (the box's fault proxy forwards to it); ``url`` is
    what student code authenticates with (the ``student`` user on a redis-server, to be used
    through the proxy's socket); ``admin_url`` is the grader's, straight to the server."""

    def __init__(
        self, directory: Path, backend: str = "auto", cluster: bool = False, walls: ServerWalls | None = None
    ) -> None:
        self.backend = resolve_backend(backend)
        self.cluster = cluster and self.backend == "redis-server"
        self.fake_cluster = cluster and self.backend == "fakeredis"
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o711)
        self.walls = walls
        self._fake: subprocess.Popen | None = None
        self._admin = None  # the grader's connection for FLUSHALL between tests
        self._ready = False
        self._server: PrivateRedis | None = None
        if self.backend == "redis-server":
            self._server = PrivateRedis(
                data_dir=self.dir,
                unix_socket=True,
                users=True,
                confine=walls,
                maxmemory=MAXMEMORY,
                single_node_cluster=self.cluster,
                log_to_file=False,
                extra_args=list(SERVER_LIMITS),
            )
        else:
            sock_dir = self.socket_path.parent
            sock_dir.mkdir(parents=True, exist_ok=True)
            if walls is not None and walls.uid is not None:
                os.chown(sock_dir, walls.uid, walls.uid)
            os.chmod(sock_dir, 0o711)

    @property
    def proc(self) -> subprocess.Popen | None:
        return self._server.proc if self._server is not None else self._fake

    @property
    def socket_path(self) -> Path:
        return self.dir / "sock" / "redis.sock"

    @property
    def student_auth(self) -> tuple[str, str] | None:
        """(user, password) student code connects with, or None (fakeredis has no users)."""
        if self._server is None:
            return None
        return "student", self._server._secrets["student"]

    @property
    def url(self) -> str:
        """The student's URL straight to the server (tests of the server itself; students use the proxy)."""
        return self._server.student_url if self._server is not None else f"unix://{self.socket_path}"

    @property
    def admin_url(self) -> str:
        return self._server.url if self._server is not None else f"unix://{self.socket_path}"

    def _fake_command(self) -> list[str]:
        from . import fakeserver

        argv = [
            _python(),
            "-I",
            "-S",
            "-c",
            fakeserver.BOOT,
            ln.import_path(),
            str(self.socket_path),
            *(["--cluster"] if self.fake_cluster else []),
        ]
        if self.walls is None:
            return argv
        return self.walls.wrap(argv, writable=[str(self.socket_path.parent)])

    def start(self, timeout: float = 60.0) -> "RunRedis":
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> "RunRedis":
        """Start the server; a fakeredis server is not waited for (see :meth:`wait_ready`)."""
        self._ready = False
        if self._server is not None:
            self._server.start(timeout=60.0)
            self._ready = True
            return self
        if self.socket_path.exists():
            self.socket_path.unlink()
        err = os.open(self.dir / "server.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            self._fake = subprocess.Popen(
                self._fake_command(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                env={},
                cwd="/",
            )
        finally:
            os.close(err)
        return self

    def errors(self, limit: int = 1500) -> str:
        """The end of what a fakeredis server wrote to its stderr (the course's own code's errors)."""
        try:
            return (self.dir / "server.err").read_text(errors="replace")[-limit:].strip()
        except OSError:
            return ""

    def wait_ready(self, timeout: float = 60.0) -> "RunRedis":
        if self._ready:
            return self
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CourseError(
                    f"the private {self.backend} did not start (exit code {self.proc.returncode}) "
                    f"{self.errors()}".strip()
                )
            if self.socket_path.exists() and self.healthy(timeout=0.5):
                self._ready = True
                return self
            time.sleep(0.005)
        why = self.errors()
        self.stop()
        raise CourseError(f"the private {self.backend} did not answer within {timeout:g} s {why}".strip())

    def client(self, prefix: str, socket_timeout: float = 5.0):
        """The grader's own client, straight to the server (owned: server-wide commands allowed)."""
        return connect(
            self.admin_url, owned=True, prefix=prefix, socket_timeout=socket_timeout, socket_connect_timeout=2
        )

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
        """A clean server for the next test: FLUSHALL, SCRIPT FLUSH, FUNCTION FLUSH and a write probe on
        the grader's own connection, or a restart if the server misbehaves (asleep, locked, out of
        memory, a busy script, stopped by a test)."""
        if self.proc is None or self.proc.poll() is not None:
            self.restart()
            return
        self.wait_ready()
        self.resume()
        try:
            if self._admin is None:
                self._admin = connect(self.admin_url, owned=True, prefix="", socket_timeout=2, socket_connect_timeout=2)
            a = self._admin
            ok = a.flushall() and a.set("__course_probe__", "1") and a.delete("__course_probe__") == 1
            a.script_flush()
            try:
                a.execute_command("FUNCTION", "FLUSH")
            except Exception:  # noqa: BLE001 - a server without functions
                pass
        except Exception:  # noqa: BLE001
            ok = False
        if not ok or not self.proc or self.proc.poll() is not None:
            self.restart()

    def _pids(self) -> list[int]:
        """The server's processes: the launcher's (bubblewrap's) whole tree."""
        if self.proc is None:
            return []
        return process_tree(self.proc.pid)

    def pause(self) -> None:
        """Stop the server's processes (SIGSTOP): it answers nobody until :meth:`resume`.  Returns
        once every thread of them is stopped (a signal is delivered when its target next runs: on a
        busy machine a server could otherwise answer a request sent just after this call)."""
        pids = self._pids()
        for pid in reversed(pids):
            _signal(pid, signal.SIGSTOP)
        _wait_states(pids, {"T", "t", "Z", "X"}, timeout=5.0)

    def resume(self) -> None:
        for pid in self._pids():
            _signal(pid, signal.SIGCONT)

    def stop(self) -> None:
        """The server ends at once (SIGKILL: a crash), as a stopped server would for its clients."""
        self._ready = False
        if self._admin is not None:
            try:
                self._admin.close()
            except Exception:  # noqa: BLE001
                pass
            self._admin = None
        pids = self._pids()
        self.resume()
        for pid in pids:  # the whole tree, whatever session or group bubblewrap gave its processes
            _signal(pid, signal.SIGKILL)
        if self._server is not None:
            self._server.kill()
        elif self._fake and self._fake.poll() is None:
            try:
                os.killpg(self._fake.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._fake.wait(5)
        self._fake = None
        # returns once none of them runs: a connection made before the stop gets no more answers
        _wait_states(pids, {"Z", "X"}, timeout=5.0)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _python() -> str:
    import sys

    return sys.executable


def _task_files(pid: int, name: str) -> list[str]:
    """The file ``name`` of every thread of ``pid`` (``/proc/PID/task/*/NAME``); none once it is gone."""
    out: list[str] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                out.append(f.read())
        except OSError:
            continue
    return out


def _states(pid: int) -> set[str]:
    """The scheduler states of every thread of ``pid``; empty once gone."""
    return {stat.rsplit(")", 1)[1].split()[0] for stat in _task_files(pid, "stat") if ")" in stat}


def _wait_states(pids: list[int], done: set[str], timeout: float) -> bool:
    """Wait until every thread of ``pids`` is in one of the states ``done`` (or gone)."""
    deadline = time.monotonic() + timeout
    while True:
        if all(_states(pid) <= done for pid in pids):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (from /proc; every thread's list)."""
    return [int(x) for text in _task_files(pid, "children") for x in text.split()]


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants, parents first."""
    out, todo = [], [pid]
    while todo and len(out) < 10_000:
        p = todo.pop(0)
        if p in out:
            continue
        out.append(p)
        todo += children(p)
    return out
