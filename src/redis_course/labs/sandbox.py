"""One student module in a separate, resource-limited process (see :mod:`._child` for that side).

The grader never runs student code itself.  :class:`Sandbox` starts the child, sends it requests
over a pipe and reads JSON replies with a deadline and a size limit.  A child that hangs is killed
(:class:`StudentTimeout`), one that dies or sends garbage is reported (:class:`StudentCrash`), and
the next call starts a fresh one.

Where the child runs is :func:`.isolation.mode`: ``namespaces`` when the grader is root (own
namespaces, an allow-list of paths, own uid, no network), ``bwrap`` for another user where
bubblewrap works (the same allow-list and namespaces, made by ``bwrap``), or ``none`` (resource
limits only, the same user: ``--no-isolation``, or ``check`` without bubblewrap).  In every mode a
child and whatever it starts end with it (a PID namespace, or a subreaper that kills what is left).
``COURSE_LAB_ISOLATION`` (set by the runner) says which one a grading run uses.
"""
from __future__ import annotations

import itertools
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from . import cgroups
from . import isolation as iso
from .errors import InjectedCrash, StudentCrash, StudentError, StudentImportError, StudentTimeout
from .forkserver import ForkServer, _ForkedProcess, import_path, python_paths
from .limits import Budget, BudgetExhausted, Limits, process_budget

ENV_ISOLATION = "COURSE_LAB_ISOLATION"
# the folder sandbox/ beside this module holds its submodules (redis_course.labs.sandbox.faultproxy)
__path__ = [os.path.join(os.path.dirname(__file__), "sandbox")]

BOOT = ("import sys; sys.path[:0] = sys.argv[1].split(':'); "
        "from redis_course.labs._child import main; main(sys.argv[2])")
MAX_SOURCE_BYTES = 1 << 20  # a lab.py bigger than 1 MiB is refused
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def is_root() -> bool:
    return os.geteuid() == 0


def make_run_dir(prefix: str = "course-grade-") -> Path:
    """A directory for one run's sockets and child folders: others may enter it, not list it."""
    base = None
    if is_root() and os.path.isdir("/run") and os.access("/run", os.W_OK):
        base = "/run"
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    os.chmod(d, 0o711)
    return d


_ids = itertools.count(1)


@dataclass
class Sandbox:
    source: bytes                  # the student's module (read by the grader, never a path it follows)
    url: str                       # the student's Redis (unix:// for a private server)
    prefix: str
    run_dir: Path
    limits: Limits = field(default_factory=Limits)
    isolate: bool | str | None = None  # a mode (namespaces, bwrap, none), False: none; default: the machine's
    hide: tuple[str, ...] = ()     # folders the child must not see (repository, submissions, outputs)
    forkserver: ForkServer | None = None  # fork instead of starting an interpreter (faster)
    budget: Budget | None = None   # default: this process's (see :func:`process_budget`)

    def __post_init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.workdir: Path | None = None
        self._resp_fd: int | None = None
        self._req_fd: int | None = None
        self._buf = b""
        self._ready = False
        self.import_failure: StudentImportError | None = None
        if self.isolate is None:
            self.mode = os.environ.get(ENV_ISOLATION) or iso.mode()
        elif isinstance(self.isolate, str):
            self.mode = self.isolate
        else:
            self.mode = iso.mode(bool(self.isolate))
        self.isolate = self.mode != "none"
        if self.budget is None:
            self.budget = process_budget(self.limits.lab_budget_s)
        self.cgroup: cgroups.CGroup | None = None

    # -- life cycle ------------------------------------------------------------------------------
    def spawn(self) -> None:
        """Start the child (returns at once; :meth:`wait_ready` waits for the import)."""
        self.kill()
        self.workdir = self.run_dir / f"sb-{secrets.token_hex(8)}"
        self.workdir.mkdir(mode=0o700)
        (self.workdir / "lab.py").write_bytes(self.source)
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        # what the student prints: a file of the grader's that the child only gets as a descriptor
        out_w = os.open(self.workdir / "output.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        where = urlparse(self.url)
        network = where.scheme != "unix"
        sock_dir = os.path.dirname(where.path) if not network else ""
        cfg = {
            "module": str(self.workdir / "lab.py"), "workdir": str(self.workdir), "url": self.url,
            "prefix": self.prefix, "req_fd": req_r, "resp_fd": resp_w, "out_fd": out_w, "mode": self.mode,
            "isolate": self.mode == "namespaces", "network": network, "limits": self.limits.to_dict(),
            "private": list(PRIVATE_DIRS), "hide": [os.path.realpath(h) for h in self.hide],
            "keep": [k for k in (str(self.workdir), sock_dir, *python_paths()) if k],
        }
        fds = [req_r, resp_w, out_w]
        self.cgroup = _new_cgroup(self.limits)
        if self.cgroup is not None:
            cfg["cgroup"] = self.cgroup.procs_files
        if self.mode == "bwrap":
            inner = [sys.executable, "-I", "-S", "-c", BOOT, import_path(), json.dumps(cfg)]
            cfg = {**cfg, "exec": iso.bwrap_command(
                inner, read_only=[*python_paths(), *([sock_dir] if sock_dir else [])], writable=[],
                scratch=str(self.workdir), files=[str(self.workdir / "lab.py")], network=network,
                tmp_mb=self.limits.tmp_mb, chdir=str(self.workdir), hide=cfg["hide"])}
        try:
            if self.forkserver is not None:
                self.proc = _ForkedProcess(self.forkserver.spawn(cfg, fds))  # type: ignore[assignment]
            else:
                argv = cfg.get("exec") or [sys.executable, "-I", "-S", "-c", BOOT, import_path(), json.dumps(cfg)]
                self.proc = subprocess.Popen(
                    argv, pass_fds=tuple(fds), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, start_new_session=True, cwd=self.workdir, close_fds=True)
        finally:
            for fd in fds:
                os.close(fd)
        self._req_fd, self._resp_fd, self._buf, self._ready = req_w, resp_r, b"", False
        os.set_blocking(self._resp_fd, False)

    def wait_ready(self) -> None:
        if self._ready:
            return
        if self.proc is None:
            self.spawn()
        left = self.budget.left()
        if left <= 0:
            self.kill()
            raise BudgetExhausted("", self.limits.lab_budget_s)
        try:
            with self.budget:
                msg = self._read(time.monotonic() + min(self.limits.start_timeout_s, left), "")
        except StudentTimeout:
            self.kill()
            if left < self.limits.start_timeout_s:
                raise BudgetExhausted("", self.limits.lab_budget_s) from None
            self.import_failure = StudentImportError("", f"the module did not load within "
                                                         f"{self.limits.start_timeout_s:g} s")
            raise self.import_failure from None
        except StudentCrash as exc:
            self.import_failure = StudentImportError("", f"the process ended while loading the module ({exc.detail})")
            raise self.import_failure from None
        if msg.get("event") == "ready":
            self._ready = True
            return
        self.kill()
        kind = str(msg.get("type", "Error"))[:100]
        self.import_failure = StudentImportError("", f"loading the module failed: {kind}: "
                                                     f"{str(msg.get('message', ''))[:500]}")
        raise self.import_failure

    def start(self) -> "Sandbox":
        self.spawn()
        self.wait_ready()
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """Stop the child and everything it started (its PID namespace when isolated)."""
        proc, self.proc = self.proc, None
        for fd in (self._req_fd, self._resp_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._req_fd = self._resp_fd = None
        self._ready = False
        if proc is not None and proc.poll() is None:
            try:
                # the outer process (root's relay, bwrap, or the subreaper) ends everything inside first
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(2)
                except subprocess.TimeoutExpired:
                    pass
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        if self.cgroup is not None:  # whatever is left in it, however it got away
            self.cgroup.remove()
            self.cgroup = None
        if self.workdir is not None:
            self._last_output = self.output_tail()
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    close = kill

    # -- calls -----------------------------------------------------------------------------------
    def call(self, fn: str, args: tuple | list = (), kwargs: dict | None = None, timeout: float | None = None,
             hook: bool = False):
        """``fn(r, *args, **kwargs)`` in the child; the JSON-decoded result.  ``hook``: one of the
        grader's own functions in the child (a fault, a time zone), never the student's."""
        if self.import_failure is not None:
            raise self.import_failure
        if not self.alive:
            self.spawn()
        self.wait_ready()
        rid = next(_ids)
        request = {"id": rid, "hook": fn, "args": list(args)} if hook else \
            {"id": rid, "fn": fn, "args": list(args), "kwargs": kwargs or {}}
        payload = json.dumps(request) + "\n"
        try:
            os.write(self._req_fd, payload.encode())  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            self.kill()
            raise StudentCrash(fn, "the student's process had ended") from None
        timeout = self.limits.call_timeout_s if timeout is None else timeout
        left = self.budget.left()
        if left <= 0:
            self.kill()
            raise BudgetExhausted(fn, self.limits.lab_budget_s)
        try:
            with self.budget:
                msg = self._read(time.monotonic() + min(timeout, left), fn)
        except StudentTimeout:
            self.kill()
            if left < timeout:
                raise BudgetExhausted(fn, self.limits.lab_budget_s) from None
            raise StudentTimeout(fn, timeout) from None
        except StudentCrash:
            self.kill()
            raise
        if msg.get("id") != rid:
            self.kill()
            raise StudentCrash(fn, "the student's process sent an answer nobody asked for")
        if "ok" in msg:
            return msg["ok"]
        if "fault" in msg and isinstance(msg["fault"], dict):
            self.kill()  # the process ended itself after saying so: a fresh one serves the next call
            raise InjectedCrash(fn, str(msg["fault"].get("message", "simulated crash"))[:300])
        if "error" in msg and isinstance(msg["error"], dict):
            e = msg["error"]
            raise StudentError(str(e.get("type", "Error"))[:100], str(e.get("message", ""))[:2000], fn,
                               str(e.get("traceback", ""))[:2000])
        detail = str(msg.get("crash", "a malformed answer"))[:300]
        self.kill()
        raise StudentCrash(fn, detail)

    def _read(self, deadline: float, fn: str) -> dict:
        """One JSON line from the child, or StudentTimeout / StudentCrash."""
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StudentTimeout(fn, 0)
            ready, _, _ = select.select([self._resp_fd], [], [], min(left, 0.5))
            if not ready:
                continue
            try:
                chunk = os.read(self._resp_fd, 1 << 16)  # type: ignore[arg-type]
            except BlockingIOError:
                continue
            if not chunk:
                try:
                    code = self.proc.wait(5) if isinstance(self.proc, subprocess.Popen) else None
                except subprocess.TimeoutExpired:
                    code = None
                raise StudentCrash(fn, _exit_reason(code))
            self._buf += chunk
            if len(self._buf) > self.limits.max_message and b"\n" not in self._buf[: self.limits.max_message]:
                raise StudentCrash(fn, f"the answer was larger than {self.limits.max_message} bytes")
        line, self._buf = self._buf.split(b"\n", 1)
        if line.startswith(b'{"exit": ') and len(line) < 40:  # the root side saying the process ended
            try:
                code = int(json.loads(line)["exit"])
            except (ValueError, KeyError, TypeError):
                code = None
            raise StudentCrash(fn, _exit_reason(code))
        if len(line) > self.limits.max_message:
            raise StudentCrash(fn, f"the answer was larger than {self.limits.max_message} bytes")
        try:
            msg = json.loads(line)
        except ValueError:
            raise StudentCrash(fn, "the student's process wrote something that is not a JSON answer") from None
        if not isinstance(msg, dict):
            raise StudentCrash(fn, "the student's process wrote something that is not a JSON answer")
        return msg

    # -- output ----------------------------------------------------------------------------------
    def output_tail(self, limit: int = 2000) -> str:
        """The end of what the student's code printed (read without following links)."""
        if self.workdir is None:
            return getattr(self, "_last_output", "")
        try:
            fd = os.open(self.workdir / "output.log", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return ""
        try:
            st = os.fstat(fd)
            if not (st.st_mode & 0o170000 == 0o100000):
                return ""
            os.lseek(fd, max(0, st.st_size - limit), os.SEEK_SET)
            return os.read(fd, limit).decode("utf-8", "replace")
        finally:
            os.close(fd)


def _new_cgroup(limits: Limits) -> "cgroups.CGroup | None":
    """A cgroup with the process limits, where this machine lets the grader make one (else rlimits)."""
    if cgroups.cgroup_version() is None:
        return None
    try:
        return cgroups.CGroup(f"sb-{os.getpid()}-{secrets.token_hex(6)}", limits.memory_mb, limits.nproc)
    except OSError:
        return None


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "the process ended"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed)", "SIGSEGV": " (crashed)"}.get(name, "")
        return f"the process was stopped by {name}{hint}"
    if code >= 128 + 1 and code - 128 in {s.value for s in signal.Signals}:
        return f"the process was stopped by {signal.Signals(code - 128).name}"
    return f"the process exited with code {code}"
