"""One process of a box, seen from the grader: it calls the student's functions and trusts nothing back.

:class:`StudentProcess` asks the box's fork server for a process (:meth:`.box.Box.fork`), sends it
requests over a pipe and reads JSON replies with a deadline, a size limit and a bounded parse.  A
process that hangs is killed (:class:`StudentTimeout`), one that dies or sends garbage is reported
(:class:`StudentCrash`), and the next call starts a fresh one.

Faults come from outside the process: :meth:`arm_crash` arms the box's fault proxy for this
process's connections (the proxy cuts the armed round trip and :meth:`fault_kill` kills the
process); :meth:`crash_at` arms a step that the process reports when it reaches it (the grader kills
it there); a time zone or a machine clock is given to a fresh process before it starts.  Only these
raise :class:`InjectedCrash`: nothing the student's code sends can.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import select
import signal
import threading
import time
from pathlib import Path

from .errors import InjectedCrash, StudentCrash, StudentError, StudentImportError, StudentTimeout
from .box import Box, BoxError
from .limits import Budget, BudgetExhausted, Limits, process_budget

_ids = itertools.count(1)


class _Incarnation:
    """One life of a :class:`StudentProcess`: what the box's fault proxy arms and crashes (a fresh
    process after a crash is a new incarnation, with no fault armed)."""

    __slots__ = ("proc",)

    def __init__(self, proc: "StudentProcess") -> None:
        self.proc = proc

    def fault_kill(self, info: dict) -> None:
        if self.proc._owner is self:
            self.proc.fault_kill(info)


class StudentProcess:
    """The student's module in one process of ``box``: ``call(fn, args)`` returns its JSON result."""

    def __init__(
        self, box: Box, limits: Limits | None = None, budget: Budget | None = None, task: bool = False
    ) -> None:
        self.box = box
        self.limits = limits or box.limits
        self.budget = budget if budget is not None else process_budget(self.limits.lab_budget_s)
        self.task = task  # a task of the grader's (:mod:`.tasks`), not the student's module
        self.tz: str | None = None  # the machine's time zone for the next process
        self.clock_offset: float = 0.0  # the machine's clock for the next process
        self.pid: int | None = None  # inside the box
        self.host_pid: int | None = None
        self._req_fd: int | None = None
        self._resp_fd: int | None = None
        self._out_path: Path | None = None
        self._buf = b""
        self._ready = False
        self._step: str | None = None  # the step armed for this process (crash_at)
        self._crash_units: int | None = None
        self._fault: dict | None = None  # set when the grader's fault ended the process
        self._owner: _Incarnation | None = None
        self._lock = threading.Lock()
        self.import_failure: StudentImportError | None = None
        self._last_output = ""

    # -- life cycle ------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._req_fd is not None and self.host_pid is not None and _exists(self.host_pid)

    def spawn(self) -> None:
        """Start the process (returns at once; :meth:`wait_ready` waits for the import)."""
        self.kill()
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        self._out_path = self.box.dir / f"out-{secrets.token_hex(6)}.log"
        out_w = os.open(self._out_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        cfg = {"tz": self.tz, "clock_offset": self.clock_offset, **({"task": True} if self.task else {})}
        try:
            self.pid, self.host_pid = self.box.fork(cfg, [req_r, resp_w, out_w])
        except BoxError:
            for fd in (req_w, resp_r):
                os.close(fd)
            raise
        finally:
            for fd in (req_r, resp_w, out_w):
                os.close(fd)
        self._owner = _Incarnation(self)
        self.box.register(self.host_pid, self._owner)
        self._req_fd, self._resp_fd, self._buf, self._ready, self._fault = req_w, resp_r, b"", False, None
        os.set_blocking(self._resp_fd, False)
        if self._crash_units is not None and self.box.proxy is not None:
            self.box.proxy.arm_crash(self._crash_units, owner=self._owner)

    def wait_ready(self) -> None:
        if self._ready:
            return
        if self._req_fd is None:
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
            self.import_failure = StudentImportError(
                "", f"the module did not load within {self.limits.start_timeout_s:g} s"
            )
            raise self.import_failure from None
        except StudentCrash as exc:
            self.import_failure = StudentImportError("", f"the process ended while loading the module ({exc.detail})")
            raise self.import_failure from None
        if msg.get("event") == "ready":
            self._ready = True
            return
        self.kill()
        kind = str(msg.get("type", "Error"))[:100]
        self.import_failure = StudentImportError(
            "", f"loading the module failed: {kind}: {str(msg.get('message', ''))[:500]}"
        )
        raise self.import_failure

    def start(self) -> "StudentProcess":
        self.spawn()
        self.wait_ready()
        return self

    def kill(self) -> None:
        """Stop the process and its process group (what it left elsewhere, the box's reap ends)."""
        for fd in (self._req_fd, self._resp_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._req_fd = self._resp_fd = None
        self._ready = False
        if self.host_pid is not None:
            _killpg(self.host_pid)
        self.host_pid = None
        if self._out_path is not None:
            self._last_output = self.output_tail()
            try:
                os.unlink(self._out_path)
            except OSError:
                pass
            self._out_path = None

    close = kill

    def respawn(self) -> None:
        """A fresh process for the next call (a new time zone or clock takes effect so)."""
        self.kill()

    # -- faults ----------------------------------------------------------------------------------
    def arm_crash(self, units: int | None) -> bool:
        """After ``units`` more round trips on the run's keys, the next one is cut and the process
        dies (the box's fault proxy, outside the process); None disarms."""
        self._crash_units = None if units is None else int(units)
        if self.box.proxy is None:
            raise StudentError("RuntimeError", "crash faults need the box's own Redis", "arm_crash")
        if self._owner is not None:
            self.box.proxy.arm_crash(self._crash_units, owner=self._owner)
        return self._crash_units is not None

    def crash_at(self, step: str | None) -> str | None:
        from ...lessons.faults import STEPS

        if step is not None and step not in STEPS:
            raise ValueError(f"step must be one of {STEPS} or None")
        self._step = step
        return step

    def set_machine_timezone(self, zone: str | None) -> str:
        """The next process runs with ``TZ=zone`` (None: UTC), set before its interpreter reads
        anything; returns the local date of the epoch's first second there."""
        import zoneinfo
        from datetime import datetime, timezone

        self.tz = zone
        self.respawn()
        tz = zoneinfo.ZoneInfo(zone or "UTC")
        return datetime.fromtimestamp(0, timezone.utc).astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")

    def set_machine_clock(self, offset_s: float | None) -> float:
        """The next process's wall clock runs ``offset_s`` seconds off (None or 0: the real clock)."""
        self.clock_offset = float(offset_s or 0)
        self.respawn()
        return time.time() + self.clock_offset

    def hold_after(self, key: str) -> None:
        """Once this process (its current life) sent a request naming ``key`` (the full key name),
        its next request on the run's keys waits at the box's fault proxy until :meth:`release`
        (:meth:`.faultproxy.FaultProxy.hold_after`)."""
        if self.box.proxy is None:
            raise StudentError("RuntimeError", "holding a request needs the box's own Redis", "hold_after")
        if self._owner is None:
            self.spawn()
        self.box.proxy.hold_after(self._owner, key)

    def hold_state(self) -> str | None:
        """``armed``, ``named``, ``held`` or None (see :meth:`.faultproxy.FaultProxy.hold_state`)."""
        if self.box.proxy is None or self._owner is None:
            return None
        return self.box.proxy.hold_state(self._owner)

    def release(self) -> None:
        """The held request goes on (a hold that has not fired is disarmed)."""
        if self.box.proxy is not None and self._owner is not None:
            self.box.proxy.release(self._owner)

    def traffic(self) -> dict | None:
        """What this process (its current life) sent to Redis, as the box's fault proxy counted it:
        connections, round trips, commands, and the units on the run's keys
        (:meth:`.faultproxy.FaultProxy.traffic`); None when there is no proxy (a Redis the course
        does not own, a student's REDIS_URL)."""
        if self.box.proxy is None or self._owner is None:
            return None
        return self.box.proxy.traffic(self._owner)

    def fault_kill(self, info: dict) -> None:
        """Called by the box when its proxy cut this process's armed round trip: it dies now."""
        self._fault = {
            "message": f"simulated crash: the process died before round trip {info.get('units_done', 0) + 1}"
        }
        self._crash_units = 0  # until disarmed, the next process dies at its first round trip too
        if self.host_pid is not None:
            _killpg(self.host_pid)

    # -- calls -----------------------------------------------------------------------------------
    def call(
        self,
        fn: str,
        args: tuple | list = (),
        kwargs: dict | None = None,
        timeout: float | None = None,
        server: int = 1,
    ):
        """``fn(r, *args, **kwargs)`` in the process; the JSON-decoded result.  ``server=2``: ``r`` is
        the process's client of the box's second address (:attr:`.box.Box.second_url`)."""
        if self.import_failure is not None:
            raise self.import_failure
        if not self.alive:
            self.spawn()
        self.wait_ready()
        rid = next(_ids)
        req = {
            "id": rid,
            "fn": fn,
            "args": list(args),
            "kwargs": kwargs or {},
            **({"server": 2} if server == 2 else {}),
        }
        payload = json.dumps(req) + "\n"
        if not self._write(payload):
            raise self._ended(fn, "the student's process had ended")
        timeout = self.limits.call_timeout_s if timeout is None else timeout
        left = self.budget.left()
        if left <= 0:
            self.kill()
            raise BudgetExhausted(fn, self.limits.lab_budget_s)
        deadline = time.monotonic() + min(timeout, left)
        while True:
            try:
                with self.budget:
                    msg = self._read(deadline, fn)
            except StudentTimeout:
                self.kill()
                if left < timeout:
                    raise BudgetExhausted(fn, self.limits.lab_budget_s) from None
                raise StudentTimeout(fn, timeout) from None
            except StudentCrash as exc:
                raise self._ended(fn, exc.detail) from None
            if msg.get("id") != rid:
                self.kill()
                raise StudentCrash(fn, "the student's process sent an answer nobody asked for")
            if "step" in msg:  # crash_point(step) reached: the grader alone decides
                step = msg.get("step")
                if step is not None and step == self._step:
                    self._step = None
                    self._fault = {"message": f"simulated crash after step {step!r}"}
                    self.kill()
                    raise InjectedCrash(fn, self._fault["message"])
                if not self._write(json.dumps({"go": rid}) + "\n"):
                    raise self._ended(fn, "the student's process had ended")
                continue
            break
        if "ok" in msg:
            return msg["ok"]
        if "error" in msg and isinstance(msg["error"], dict):
            e = msg["error"]
            raise StudentError(
                str(e.get("type", "Error"))[:100],
                str(e.get("message", ""))[:2000],
                fn,
                str(e.get("traceback", ""))[:2000],
            )
        detail = str(msg.get("crash", "a malformed answer"))[:300]
        raise self._ended(fn, detail)

    def _ended(self, fn: str, detail: str) -> Exception:
        """The process is gone: by the grader's own fault (InjectedCrash), or by itself (StudentCrash)."""
        fault, self._fault = self._fault, None
        self.kill()
        if fault is not None or (self.box.proxy is not None and self.box.proxy.crashed_owner(self._owner)):
            return InjectedCrash(fn, (fault or {}).get("message", "simulated crash")[:300])
        return StudentCrash(fn, detail)

    def _write(self, payload: str) -> bool:
        try:
            os.write(self._req_fd, payload.encode())  # type: ignore[arg-type]
            return True
        except (BrokenPipeError, OSError, TypeError):
            return False

    def _read(self, deadline: float, fn: str) -> dict:
        """One JSON line from the process, or StudentTimeout / StudentCrash."""
        limit = self.limits.max_message
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StudentTimeout(fn, 0)
            ready, _, _ = select.select([self._resp_fd], [], [], min(left, 0.5))
            if not ready:
                if self._fault is not None:
                    raise StudentCrash(fn, "the process was killed")
                continue
            try:
                chunk = os.read(self._resp_fd, 1 << 16)  # type: ignore[arg-type]
            except BlockingIOError:
                continue
            if not chunk:
                oom = self.box.memory_kill(self.host_pid)
                if oom is not None and self._fault is None:
                    raise StudentCrash(fn, oom)
                code = self.box.exit_status(self.pid) if self.pid is not None and self._fault is None else None
                raise StudentCrash(fn, exit_reason(code))
            self._buf += chunk
            if len(self._buf) > limit and b"\n" not in self._buf[:limit]:
                raise StudentCrash(fn, f"the answer was larger than {limit} bytes")
        line, self._buf = self._buf.split(b"\n", 1)
        if len(line) > limit:
            raise StudentCrash(fn, f"the answer was larger than {limit} bytes")
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            raise StudentCrash(fn, "the student's process wrote something that is not a JSON answer") from None
        if not isinstance(msg, dict):
            raise StudentCrash(fn, "the student's process wrote something that is not a JSON answer")
        return msg

    # -- output ----------------------------------------------------------------------------------
    def output_tail(self, limit: int = 2000) -> str:
        """The end of what the student's code printed (the grader's own file, read without links)."""
        if self._out_path is None:
            return self._last_output
        try:
            fd = os.open(self._out_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
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


def exit_reason(code: int | None) -> str:
    """How a process ended, in a phrase (the signal's name and what it usually means)."""
    if code is None:
        return "the process ended"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed)", "SIGSEGV": " (crashed)"}.get(name, "")
        return f"the process was stopped by {name}{hint}"
    return f"the process exited with code {code}"


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _killpg(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass
