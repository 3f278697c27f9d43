"""One box per student run: everything a submission can influence, in one place the grader talks to.

A box holds, for one student and one lab:

* the **student's processes**, forked by the box's own fork server (:mod:`.inbox`) under one
  bubblewrap sandbox (:func:`.launch.bwrap_args`): every namespace, loopback only, an empty
  environment, one size-limited tmpfs at ``/box`` (the student's writable space, shared by the
  run's processes: ``/box/work``), the system folders and Python read-only, nothing else of the
  machine — not the checkout, the grader's run folder, other students or the instructor's files;
* its **Redis server** (:mod:`.server`), in a sandbox of its own beside it (the student's processes
  cannot see, signal or trace it) and reachable from the box only through
* the **fault proxy** (:mod:`.faultproxy`), which runs in the grader and sits on the only socket the
  box sees (``/run/redis/redis.sock``): it cuts a process's connection at the round trip a test
  chose (then the grader kills that process from outside), or holds every command (a paused
  server);
* one **cgroup** (memory, processes, CPU) around all of it, where the machine lets the grader make
  one, and resource limits on every process.

The grader talks to the box over one socket to its fork server and one pipe pair per process, with
bounded messages (:mod:`.process`), and trusts nothing that comes back: its checks of Redis state
go straight to the server as the ``grader`` ACL user, files of the box are read by a task process
inside it (:mod:`.tasks`), faults and time zones are applied outside the student's interpreter.

On a machine where no namespace can be made (a container without CAP_SYS_ADMIN, as on Gradescope)
the container is the box: the same processes and proxy, without bubblewrap (:func:`.launch.mode`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import threading
import time
from pathlib import Path

from . import cgroups, make_run_dir
from . import launch as ln
from .limits import WATCH_HEADROOM, WATCH_MIN_PERIOD_S, WATCH_PERIOD_S, WATCH_RATE, Limits
from .server import RunRedis, ServerWalls, children, process_tree

BOX_SOCKET_DIR = "/run/redis"  # where the box sees the proxy's socket (under bubblewrap)
SECOND_SOCKET = "redis-2.sock"  # the second address of the same server (:attr:`Box.second_url`)
BOX_ROOT = "/box"  # the box's writable tmpfs (under bubblewrap)
SERVER_MEMORY_MB = 512  # what the box's cgroup allows its Redis beside the student's processes
SERVER_PROCESSES = 64  # and processes and threads: the Redis, the fork server, bubblewrap
NPROC_SHARED_UID = 2048  # processes a box may add to its user's when boxes share one uid
STARTUP_TIMEOUT_S = 60.0  # the box's own start (its fork server's imports) on a loaded machine
SOCKET_PATH_MAX = 107  # bytes of a Unix socket's path (108 with its NUL)
#: The box's deepest socket below its own folder (``box-<12>/redis/sock/redis.sock``): a box given a
#: run folder too long for it makes its folder in a short one of its own (:func:`..make_run_dir`).
DEEPEST_SOCKET = "box-000000000000/redis/sock/redis.sock"


class BoxError(RuntimeError):
    """The box could not be started or stopped answering (the grader restarts it)."""


class Box:
    """``start()``, ``spawn(...)``, ``reap()``, ``reset()``, ``stop()``; ``redis`` is the box's server."""

    def __init__(
        self,
        source: bytes,
        run_dir: Path,
        prefix: str,
        limits: Limits | None = None,
        *,
        backend: str = "auto",
        cluster: bool = False,
        mode: str | None = None,
        hide: tuple[str, ...] = (),
        url: str | None = None,
    ) -> None:
        self.source = source
        self.run_dir = Path(run_dir)
        self.prefix = prefix
        self.limits = limits or Limits()
        self.mode = mode or ln.mode()
        self.hide = [os.path.realpath(h) for h in hide]
        self._own_run_dir: Path | None = None
        if len(os.fsencode(os.path.abspath(self.run_dir))) + 1 + len(DEEPEST_SOCKET) > SOCKET_PATH_MAX:
            self.run_dir = self._own_run_dir = make_run_dir("course-box-")
        self.dir = self.run_dir / f"box-{secrets.token_hex(6)}"
        _mkdir(self.dir, 0o711)
        root = os.geteuid() == 0
        self.uid = ln.new_uid() if root and self.mode != "none" else None
        if self.uid is not None and self.mode != "bwrap" and not ln.reachable_by_others(ln.python_paths()):
            ln.release_uid(self.uid)
            self.uid = None  # no mount namespace to make Python reachable: the container's root runs it
        self.server_uid = self.uid + 1 if self.uid is not None else None
        self.cgroup = _new_cgroup(self.limits)
        self.external_url = url  # a Redis the course does not own (a student's REDIS_URL): no server, no proxy
        self.backend, self.cluster = backend, cluster
        self.redis: RunRedis | None = None
        self.proxy = None
        self.second_proxy = None  # the same server at a second address: "another server" (``second_url``)
        self._ctl: socket.socket | None = None
        self._lock = threading.Lock()
        self.proc = None
        self.box_pid: int | None = None  # the fork server's pid on this machine
        self.alive = False
        self._owners: dict[int, object] = {}
        self.watch: MemoryWatch | None = None  # the box's memory as a whole, where no cgroup holds it

    # -- paths as the box sees them ------------------------------------------------------------------
    @property
    def isolated(self) -> bool:
        return self.mode == "bwrap"

    @property
    def work(self) -> str:
        return f"{BOX_ROOT}/work" if self.isolated else str(self.dir / "box" / "work")

    @property
    def module_path(self) -> str:
        return f"{BOX_ROOT}/lab.py" if self.isolated else str(self.dir / "box" / "lab.py")

    @property
    def student_url(self) -> str:
        """What the student's processes connect to: the proxy's socket, with the student's ACL user."""
        return self._url("redis.sock")

    @property
    def second_url(self) -> str:
        """The same server at a second address, through a proxy of its own (:attr:`second_proxy`): to
        the student's code another server, that the grader pauses alone ("" with a Redis the course
        does not own)."""
        return "" if self.external_url else self._url(SECOND_SOCKET)

    def _url(self, name: str) -> str:
        if self.external_url:
            return self.external_url
        from urllib.parse import quote

        sock = f"{BOX_SOCKET_DIR}/{name}" if self.isolated else str(self.dir / "proxy" / name)
        auth = self.redis.student_auth if self.redis else None
        creds = f"{quote(auth[0], safe='')}:{quote(auth[1], safe='')}@" if auth else ""
        return f"unix://{creds}{sock}"

    # -- life cycle ----------------------------------------------------------------------------------
    def start(self) -> "Box":
        if not self.external_url:
            self._start_server()
            self._start_proxy()
        self._start_box()
        return self

    def _launch(self, uid: int | None, name: str) -> ln.Launch:
        stage = None
        if uid is not None and self.mode == "bwrap":
            stage = self.dir / f"stage-{name}"
            _mkdir(stage, 0o755)
        return ln.Launch(uid, stage, self.cgroup.procs_files if self.cgroup else None)

    def _rlimits(self, extra_nproc: int = 0) -> dict[str, int]:
        nproc = self.limits.nproc + extra_nproc
        if self.uid is None:
            # the grader's own uid, shared by every box it runs: the kernel counts all their processes
            # against each one's RLIMIT_NPROC, so a box's limit there is a roomy bound for the user
            # (one box's fork bomb must not stop another box's honest fork); per box only a cgroup
            # holds it (root, or a delegated cgroup)
            nproc = ln_processes_of(os.getuid()) + NPROC_SHARED_UID
        return {"RLIMIT_NPROC": nproc, "RLIMIT_CORE": 0}

    def _nproc_in_box(self) -> int | None:
        """RLIMIT_NPROC for the box's processes, set inside the box where it counts the box alone.

        With a uid shared by every box (an ordinary user grading), the limit set from outside must
        leave room for all the user's processes (:meth:`_rlimits`).  But bubblewrap gives the box a
        user namespace of its own, and since Linux 5.14 the kernel counts RLIMIT_NPROC per user
        namespace: set inside the box, ``nproc`` bounds the box's own processes and threads, whatever
        the user runs elsewhere.  None where the box has no namespace of its own or the kernel is
        older (the roomy bound stays; a cgroup, where there is one, holds the box)."""
        if self.uid is not None or not self.isolated or _kernel_version() < (5, 14):
            return None
        return self.limits.nproc

    def _start_server(self) -> None:
        launch = self._launch(self.server_uid, "redis")
        rl = self._rlimits(extra_nproc=SERVER_PROCESSES)
        from .server import FAKE_MEMORY_MB, resolve_backend

        if resolve_backend(self.backend) == "fakeredis":
            rl["RLIMIT_AS"] = FAKE_MEMORY_MB << 20
        walls = ServerWalls(
            self.mode if self.mode == "bwrap" else "plain", launch, rl, read_only=ln.python_paths(), hide=self.hide
        )
        self.redis = RunRedis(self.dir / "redis", self.backend, cluster=self.cluster, walls=walls)
        self.redis.start()

    def _start_proxy(self) -> None:
        from .faultproxy import FaultProxy

        pdir = self.dir / "proxy"
        _mkdir(pdir, 0o711)
        self.proxy = FaultProxy(
            str(pdir / "redis.sock"),
            str(self.redis.socket_path),
            self.prefix,
            owner_of=self._owner_of,
            on_crash=self._on_crash,
        ).start()
        os.chmod(pdir / "redis.sock", 0o777)
        self.second_proxy = FaultProxy(
            str(pdir / SECOND_SOCKET), str(self.redis.socket_path), self.prefix, owner_of=self._owner_of
        ).start()
        os.chmod(pdir / SECOND_SOCKET, 0o777)

    def _start_box(self) -> None:
        """The box's fork server, under bubblewrap when the box is isolated."""
        host_box = self.dir / "box"
        _mkdir(host_box, 0o711)
        (host_box / "lab.py").write_bytes(self.source)
        os.chmod(host_box / "lab.py", 0o444)
        work = host_box / "work"
        _mkdir(work, 0o700)
        if self.uid is not None:
            os.chown(work, self.uid, self.uid)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg = {
            "work": self.work,
            "alone": self.uid is not None or self.isolated,
            "module": self.module_path,
            "prefix": self.prefix,
            "url": self.student_url,
            "second_url": self.second_url,
            "limits": self.limits.to_dict(),
            "nproc": self._nproc_in_box(),
            "tmp": "/tmp" if self.isolated else str(work),
            "scratch": ["/tmp", "/dev/shm"] if self.isolated else [],
            "import_path": ln.import_path(),
            "faketime": faketime_library(),
        }
        from . import inbox

        argv = [_python(), "-I", "-S", "-c", inbox.BOOT, ln.import_path(), str(theirs.fileno())]
        launch = self._launch(self.uid, "box")
        info_r = info_w = None
        if self.isolated:
            info_r, info_w = os.pipe()
            args = ln.bwrap_args(
                launch, read_only=ln.python_paths(), hide=self.hide, tmp_mb=self.limits.tmp_mb, info_fd=info_w
            )
            args += [
                "--perms",
                "0755",
                "--size",
                str(self.limits.tmp_mb << 20),
                "--tmpfs",
                BOX_ROOT,
                "--ro-bind",
                str(host_box / "lab.py"),
                self.module_path,
                "--perms",
                "0700",
                "--dir",
                self.work,
                "--chdir",
                self.work,
            ]
            if self.proxy is not None:
                args += ["--ro-bind", str(self.dir / "proxy"), BOX_SOCKET_DIR]
            args += self._own_cgroup() + self._external_redis()
            argv = args + ["--", *argv]
        keep = [theirs.fileno()] + ([info_w] if info_w is not None else [])
        command = launch.command(argv, self._rlimits(), keep_fds=keep)
        import subprocess

        err = os.open(self.dir / "box.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            self.proc = subprocess.Popen(
                command,
                pass_fds=tuple(keep),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                env={},
                cwd="/",
            )
        finally:
            os.close(err)
        theirs.close()
        self._ctl = ours
        ours.send(json.dumps(cfg).encode())  # the fork server's settings: its first message
        if info_w is not None:
            os.close(info_w)
            info = ln.read_info(info_r)
            os.close(info_r)
            init = info.get("child-pid")
            self.box_pid = self._first_child(init) if init else None
            if self.box_pid is None:
                why = self.errors()
                self.stop()
                raise BoxError(f"the box did not start ({why or 'bubblewrap said nothing'})")
        else:
            self.box_pid = self.proc.pid
        self.alive = True
        if self.cgroup is None:
            self.watch = MemoryWatch(self, self.limits.memory_mb << 20)
            self.watch.start()

    def _external_redis(self) -> list[str]:
        """A Redis the course does not own (a student's REDIS_URL, ``check`` on their machine): its
        Unix socket's folder read-only, or, over TCP, the machine's network (their own server)."""
        if not self.external_url:
            return []
        from urllib.parse import urlparse

        where = urlparse(self.external_url)
        if where.scheme == "unix":
            return ["--ro-bind", os.path.dirname(where.path), os.path.dirname(where.path)]
        return ["--share-net"]

    def _own_cgroup(self) -> list[str]:
        """The box's own cgroup, read-only where the box looks for its cgroups (its processes see their
        limits, and no other cgroup of the machine)."""
        if self.cgroup is None:
            return []
        out = []
        for d in self.cgroup.dirs:
            if self.cgroup.version == "v1":  # /sys/fs/cgroup/<controller>/course-grade/<box>
                controller = Path(d).relative_to(cgroups.CGROUP_ROOT).parts[0]
                out += ["--ro-bind", d, f"{cgroups.CGROUP_ROOT}/{controller}"]
            else:
                out += ["--ro-bind", d, cgroups.CGROUP_ROOT]
        return out

    def _first_child(self, pid: int, timeout: float = 10.0) -> int | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            kids = children(pid)
            if kids:
                return kids[0]
            if self.proc is not None and self.proc.poll() is not None:
                return None
            time.sleep(0.002)
        return None

    # -- the fork server -------------------------------------------------------------------------------
    def _ask(self, req: dict, fds: list[int] = (), timeout: float = 10.0) -> dict:
        if not self.alive or self._ctl is None:
            raise BoxError("the box is not running")
        with self._lock:
            try:
                socket.send_fds(self._ctl, [json.dumps(req).encode()], list(fds))
                self._ctl.settimeout(timeout)
                reply = self._ctl.recv(1 << 12)
            except OSError as exc:
                self.alive = False
                raise BoxError(f"the box stopped answering ({exc}) {self.errors()}".strip()) from None
        if not reply:
            self.alive = False
            raise BoxError(f"the box stopped answering {self.errors()}".strip())
        try:
            msg = json.loads(reply)
        except ValueError:
            self.alive = False
            raise BoxError("the box answered nonsense") from None
        if not isinstance(msg, dict):
            raise BoxError("the box answered nonsense")
        return msg

    def errors(self, limit: int = 1500) -> str:
        """The end of what the box's fork server (the course's own code) wrote to its stderr."""
        try:
            fd = os.open(self.dir / "box.err", os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return ""
        try:
            size = os.fstat(fd).st_size
            os.lseek(fd, max(0, size - limit), os.SEEK_SET)
            return os.read(fd, limit).decode("utf-8", "replace").strip()
        finally:
            os.close(fd)

    def fork(self, cfg: dict, fds: list[int]) -> tuple[int, int | None]:
        """A new process of the box: (its pid inside the box, its pid on this machine or None)."""
        if self.watch is not None:
            self.watch.settled()
        msg = self._ask({"op": "spawn", "cfg": cfg}, fds, timeout=STARTUP_TIMEOUT_S)
        inner = msg.get("pid")
        if not isinstance(inner, int) or inner <= 0:
            raise BoxError("the box did not start a process")
        return inner, self.host_pid(inner)

    def exit_status(self, inner: int, wait: float = 1.0) -> int | None:
        """How the box's process ``inner`` ended (negative: the signal), or None if unknown yet."""
        deadline = time.monotonic() + wait
        while True:
            try:
                code = self._ask({"op": "status", "pid": inner}, timeout=2).get("exit")
            except BoxError:
                return None
            if isinstance(code, int) or time.monotonic() > deadline:
                return code if isinstance(code, int) else None
            time.sleep(0.01)

    def host_pid(self, inner: int, timeout: float = 5.0) -> int | None:
        """The pid on this machine of the box's process ``inner`` (the same outside a PID namespace)."""
        if not self.isolated:
            return inner
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid in children(self.box_pid) if self.box_pid else []:
                if _inner_pid(pid) == inner:
                    return pid
            time.sleep(0.002)
        return None

    def reap(self) -> None:
        """Every process of the box killed but its fork server, its work folder emptied, the proxy
        cleared (faults disarmed, connections closed): nothing of one test carries into the next."""
        if self.proxy is not None:
            self.proxy.reset()
        if self.second_proxy is not None:
            self.second_proxy.reset()
            self.second_proxy.resume()
        try:
            self._ask({"op": "reap"}, timeout=10)
        except BoxError:
            self.restart_box()
        self._owners.clear()
        if self.watch is not None:
            self.watch.forget()

    def reset(self) -> None:
        """:meth:`reap`, then a clean server (FLUSHALL, scripts and functions flushed)."""
        self.reap()
        if self.redis is not None:
            self.redis.reset()

    def replace_source(self, source: bytes) -> None:
        """The next file of a variants run in this box: every process but the fork server killed and
        the writable folders emptied (:meth:`reap`), then ``source`` written over lab.py in place.

        The box's lab.py is a bind mount of the host's file, so rewriting that inode is what the next
        process imports; the fork server never imports it.  What the next file then finds is what
        the next test of one student's run finds, and that is what :meth:`reap` is for.  Starting the
        fork server anew instead (:meth:`restart_box`) cost about 0.5 CPU-s and 0.4 s per file."""
        self.reap()
        self.source = source
        host = self.dir / "box" / "lab.py"
        if not self.alive or not host.exists():
            self.restart_box()
            return
        os.chmod(host, 0o600)
        host.write_bytes(source)  # truncates the same inode: the bind mount shows the new text
        os.chmod(host, 0o444)

    def restart_box(self) -> None:
        self._stop_box()
        shutil.rmtree(self.dir / "box", ignore_errors=True)
        self._start_box()

    def _stop_box(self) -> None:
        """Everything below the fork server first (it must live meanwhile: it adopts orphans, and it
        ends when its control socket closes), then the fork server and bubblewrap."""
        if self.alive and self._ctl is not None:
            try:  # the fork server kills and reaps what is below it (no zombie is left to others)
                self._ask({"op": "reap"}, timeout=5)
            except BoxError:
                pass
        self.alive = False
        if self.watch is not None:
            self.watch.stop()
            self.watch = None
        if self.proc is not None:
            # everything below the fork server first, round after round (what forks while it is
            # killed is killed next round), the fork server last: while it lives, it adopts orphans
            for _ in range(50):
                below = process_tree(self.box_pid)[1:] if self.box_pid else []
                if not below:
                    break
                for pid in reversed(below):
                    _kill(pid)
                time.sleep(0.01)
            for pid in reversed(process_tree(self.proc.pid)):
                _kill(pid)
            try:
                self.proc.wait(5)
            except Exception:  # noqa: BLE001
                pass
        self.proc = None
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None

    def stop(self) -> None:
        """Everything of the box ends: its processes, its server, its proxy, its cgroup, its folder."""
        self._stop_box()
        for proxy in (self.proxy, self.second_proxy):
            if proxy is not None:
                proxy.close()
        self.proxy = self.second_proxy = None
        if self.redis is not None:
            self.redis.close()
            self.redis = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.uid is not None and not self.isolated:
            # no mount namespace gave the box its own /tmp: what its uids wrote in the machine's shared
            # folders goes with it, so the next student graded here finds none of it
            sweep_files_of((self.uid, self.uid + 1))
        ln.release_uid(self.uid)  # a process of it still alive keeps it taken (new_uid looks)
        shutil.rmtree(self._own_run_dir or self.dir, ignore_errors=True)

    close = stop

    def memory_kill(self, host_pid: int | None) -> str | None:
        """Why the memory watchdog stopped the box's process ``host_pid`` (None: it did not)."""
        watch = self.watch
        return watch.reason(host_pid) if watch is not None and host_pid is not None else None

    # -- faults from outside ---------------------------------------------------------------------------
    def register(self, host_pid: int | None, owner: object) -> None:
        """Connections from ``host_pid`` (or its descendants) belong to ``owner`` (a student process)."""
        if host_pid is not None:
            self._owners[host_pid] = owner

    def _owner_of(self, pid: int | None) -> object | None:
        """The student process a connecting pid belongs to: itself or its nearest registered ancestor."""
        seen = 0
        while pid and pid > 1 and seen < 64:
            owner = self._owners.get(pid)
            if owner is not None:
                return owner
            pid = _parent(pid)
            seen += 1
        return None

    def _on_crash(self, info: dict) -> None:
        """The proxy cut a process's connection at its armed round trip: that process dies now."""
        kill = getattr(info.get("owner"), "fault_kill", None)
        if kill is not None:
            kill(info)


class MemoryWatch(threading.Thread):
    """The memory of a box as a whole where no cgroup holds it (an ordinary user on cgroup v1, a
    container): a thread of the grader sums, over the box's processes, the RAM each holds of its own
    (:func:`resident_bytes`) and the kernel buffers its descriptors may hold (:func:`buffer_bytes`),
    and once the sum passes ``limit`` less its 1/:data:`WATCH_HEADROOM` (what may grow while it
    looks and kills) it kills every process below the box's fork server, as the kernel's
    out-of-memory killer does in a cgroup.  It looks again before a box growing at
    :data:`WATCH_RATE` could pass that threshold (at most :data:`WATCH_PERIOD_S` later, at least
    :data:`WATCH_MIN_PERIOD_S`): often near the limit, seldom far from it.  A call then ends as
    :class:`StudentCrash` with :meth:`reason` as its detail.

    What the sum covers, and why it bounds the box:

    * RLIMIT_AS bounds one process; this bounds their sum, however many there are.  Each look first
      adds what :func:`resident_upper` reads cheaply (RssAnon and RssShmem, at least the proportional
      share); only when that passes the threshold does it read each process's proportional set
      (smaps_rollup, which walks the page tables), so that a fork's shared pages count once.
    * Kernel buffers: a student's process may hold at most ``nofile`` descriptors, and the seccomp
      filter (:func:`.launch.student_filter`) keeps each at what the kernel gives it -- a Unix
      stream socket holds at most what it sent and its peer has not read (net.core.wmem_default and
      one message more, :data:`FD_BUFFER_BYTES`), a pipe 16 pages -- and keeps every buffer behind a
      descriptor of a box process (no descriptor in flight, no queue of unaccepted connections).
      Each descriptor a process has open is charged :data:`FD_BUFFER_BYTES` (``nofile`` of them
      where its descriptor table cannot be read)."""

    def __init__(self, box: Box, limit: int) -> None:
        super().__init__(name="box-memory-watch", daemon=True)
        self.box, self.limit = box, limit
        self.threshold = limit - limit // WATCH_HEADROOM
        self.nofile = box.limits.nofile
        self.peak = 0
        self._stopped = threading.Event()
        self._killed: dict[int, str] = {}
        self._lock = threading.Lock()

    def stop(self) -> None:
        self._stopped.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(2)

    def forget(self) -> None:
        """The processes killed so far are gone (a reap): their pids may come back for others."""
        with self._lock:
            self._killed.clear()

    def reason(self, host_pid: int) -> str | None:
        with self._lock:
            return self._killed.get(host_pid)

    def run(self) -> None:
        period = WATCH_PERIOD_S
        while not self._stopped.wait(period):
            proc = self.box.proc
            if proc is None:
                continue
            used = self.measure(process_tree(proc.pid))
            self.peak = max(self.peak, used)
            if used > self.threshold:
                self._kill(used)
            period = self.next_look(used)

    def next_look(self, used: int) -> float:
        """Seconds to the next look: before a box that holds ``used`` bytes and grows at WATCH_RATE
        could pass the threshold, never later than WATCH_PERIOD_S nor sooner than WATCH_MIN_PERIOD_S."""
        return min(WATCH_PERIOD_S, max(WATCH_MIN_PERIOD_S, (self.threshold - used) / WATCH_RATE))

    def measure(self, pids: list[int]) -> int:
        """What the processes ``pids`` hold: RAM of their own and their descriptors' kernel buffers."""
        held = sum(buffer_bytes(pid, self.nofile) for pid in pids)
        cheap = held + sum(map(resident_upper, pids))
        if cheap <= self.threshold:
            return cheap
        return held + sum(map(resident_bytes, pids))

    def _kill(self, used: int) -> None:
        """Every process below the fork server, round after round until none is left (the fork
        server adopts orphans, and starts none meanwhile: :meth:`settled` holds a new one back)."""
        why = (
            f"the box's processes together held {(used + (1 << 20) - 1) >> 20} MiB of memory and kernel buffers, "
            f"past the {self.threshold >> 20} MiB at which a box with a limit of {self.limit >> 20} MiB is "
            "stopped: they were stopped by SIGKILL (out of memory)"
        )
        top = self.box.box_pid
        with self._lock:
            for _ in range(200):
                below = process_tree(top)[1:] if top else []
                if not below:
                    break
                for pid in below:
                    self._killed.setdefault(pid, why)
                for pid in reversed(below):
                    _kill(pid)
                time.sleep(0.01)

    def settled(self) -> None:
        """Returns once no kill is under way (a new process of the box is not one to kill)."""
        with self._lock:
            pass


def _wmem_default() -> int:
    try:
        with open("/proc/sys/net/core/wmem_default") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 212_992


#: What one descriptor of a box process may hold in the kernel (:class:`MemoryWatch`): a Unix stream
#: socket's unread data is charged to its sender, which may queue while less than its send buffer
#: (net.core.wmem_default: 208 KiB by default) is queued, one message of at most half of it more;
#: and a socket whose peer closed keeps the data that peer sent, never more (it can send no more).
#: A pipe holds at most 16 pages (64 KiB).  Measured here: 210-230 KiB per full socket.
FD_BUFFER_BYTES = max(3 * _wmem_default() // 2, 16 * 4096)


def buffer_bytes(pid: int, nofile: int) -> int:
    """The kernel buffers ``pid``'s descriptors may hold: :data:`FD_BUFFER_BYTES` for each one it has
    open, or ``nofile`` of them when its table cannot be read (another uid's process that is not
    dumpable); 0 when it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd")) * FD_BUFFER_BYTES
    except PermissionError:
        return nofile * FD_BUFFER_BYTES if os.path.exists(f"/proc/{pid}") else 0
    except OSError:
        return 0


def resident_bytes(pid: int) -> int:
    """What ``pid`` holds of RAM of its own: its anonymous and shared-memory pages (not the files it
    maps, which the page cache may drop), each page shared with other processes (a fork's
    copy-on-write pages) counted in proportion (PSS, from smaps_rollup); where that cannot be read
    (another uid's process that is not dumpable), its whole resident set of both (from status).
    0 when it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            rollup = dict(line.split(":", 1) for line in f if ":" in line)
        return sum(int(rollup[k].split()[0]) for k in ("Pss_Anon", "Pss_Shmem")) << 10
    except (OSError, KeyError, ValueError, IndexError):
        pass
    st = _status(pid)
    try:
        return sum(int(st.get(k, "0 kB").split()[0]) for k in ("RssAnon", "RssShmem")) << 10
    except (ValueError, IndexError):
        return 0


def resident_upper(pid: int) -> int:
    """At least :func:`resident_bytes` of ``pid``, read cheaply (its anonymous and shared-memory pages,
    each counted whole: /proc/PID/status); 0 when it is gone."""
    st = _status(pid)
    try:
        return sum(int(st.get(k, "0 kB").split()[0]) for k in ("RssAnon", "RssShmem")) << 10
    except (ValueError, IndexError):
        return 0


FAKETIME = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


def faketime_library() -> str | None:
    """libfaketime, which sets a process's wall clock off from outside its interpreter (Debian's
    ``libfaketime``); without it the machine-clock fault is the interpreter's own (weaker)."""
    return next((p for p in FAKETIME if os.path.exists(p)), None)


def _mkdir(path: Path, mode: int) -> None:
    """A folder with exactly ``mode`` (the grader runs with umask 077: a box's uid must enter some)."""
    path.mkdir(exist_ok=True)
    os.chmod(path, mode)


def _python() -> str:
    import sys

    return sys.executable


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except (ProcessLookupError, PermissionError):
        pass


def _status(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return {}


def _inner_pid(pid: int) -> int | None:
    ns = _status(pid).get("NSpid", "").split()
    return int(ns[-1]) if ns else None


def _parent(pid: int) -> int | None:
    try:
        return int(_status(pid).get("PPid", "0"))
    except ValueError:
        return None


#: Folders every uid may write in, where a box without a mount namespace of its own leaves files.
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock")


def sweep_files_of(uids: tuple[int, ...], roots: tuple[str, ...] = SHARED_WRITABLE) -> int:
    """Remove every file, link and folder owned by ``uids`` under ``roots`` (never following a link,
    never leaving the root's file system), deepest first; how many were removed."""
    removed = 0
    for root in roots:
        try:
            dev = os.lstat(root).st_dev
        except OSError:
            continue
        for folder, dirs, files in os.walk(root, topdown=False):
            for name in files + dirs:
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                    if st.st_uid not in uids or st.st_dev != dev:
                        continue
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)
                    removed += 1
                except OSError:
                    continue
    return removed


def _kernel_version() -> tuple[int, int]:
    try:
        major, minor = os.uname().release.split(".")[:2]
        return int(major), int("".join(c for c in minor if c.isdigit()) or 0)
    except ValueError:
        return (0, 0)


def ln_processes_of(uid: int) -> int:
    """How many processes ``uid`` has now (RLIMIT_NPROC counts them all when the uid is shared)."""
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def _new_cgroup(limits: Limits) -> "cgroups.CGroup | None":
    """The box's cgroup (memory of its processes and its Redis, processes, CPU), where this machine
    lets the grader make one; else resource limits alone hold (the grading log's first line says so)."""
    if cgroups.cgroup_version() is None:
        return None
    try:
        return cgroups.CGroup(
            f"box-{os.getpid()}-{secrets.token_hex(6)}",
            limits.memory_mb + SERVER_MEMORY_MB,
            limits.nproc + SERVER_PROCESSES,
            cpus=limits.box_cpus,
        )
    except OSError:
        return None
