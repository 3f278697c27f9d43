"""The ``lab`` fixture: the student's module, seen from a test running in the grader.

``lab.count_view(17)`` sends ``count_view(r, 17)`` to the student's sandboxed process and returns
the JSON-decoded result.  ``lab.parallel(n)`` gives ``n`` proxies with a process each;
``lab.run_concurrently(calls, processes=16)`` runs the calls spread over that many processes at once;
``lab.traffic()`` is what this process has sent to Redis (connections, round trips, commands; units on the run's keys);
``lab.call_between(...)`` runs the grader's write at a chosen point inside one call.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Sequence

from ..sandbox.errors import StudentCrash, StudentError, StudentTimeout
from ..sandbox.process import StudentProcess

CAUGHT = (StudentError, StudentTimeout, StudentCrash)  # what a student's call may end with: the test's to judge


class _Function:
    """``lab.count_view``: prints as ``lab.count_view`` in assertion messages."""

    def __init__(self, proxy: "LabProxy", name: str) -> None:
        self._proxy, self.__name__ = proxy, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._proxy.call(self.__name__, *args, **kwargs)

    def __repr__(self) -> str:
        return f"lab.{self.__name__}"


class _Faults:
    """``lab.faults.arm_crash(2)``: faults the grader applies from outside the student's process."""

    NAMES = ("arm_crash", "crash_at", "set_machine_timezone", "set_machine_clock")

    def __init__(self, proxy: "LabProxy") -> None:
        self._proxy = proxy

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in self.NAMES:
            raise AttributeError(f"the grader has no fault {name}()")
        proc = self._proxy._proc()
        if name == "arm_crash" and proc.box.proxy is None:
            import pytest

            pytest.skip("crash faults need the lab's private Redis; there is none with REDIS_URL")
        return getattr(proc, name)


class LabProxy:
    def __init__(
        self, new_process: Callable[[], StudentProcess], process: StudentProcess | None = None, server: int = 1
    ) -> None:
        self._new_process = new_process
        self._process = process
        self._server = server

    def __repr__(self) -> str:
        return "lab"

    def _proc(self) -> StudentProcess:
        if self._process is None:
            self._process = self._new_process()
        return self._process

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        return _Function(self, name)

    @property
    def faults(self) -> _Faults:
        """Faults the grader applies to this process from outside it: ``arm_crash(n)`` (the box's
        fault proxy cuts the round trip after ``n`` more), ``crash_at(step)`` (killed when it reports
        that step), ``set_machine_timezone(zone)`` and ``set_machine_clock(offset_s)`` (a fresh
        process starts with them); see :class:`redis_course.labs.sandbox.process.StudentProcess`."""
        return _Faults(self)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the student's ``name(r, *args, **kwargs)``; arguments must be JSON values."""
        try:
            json.dumps([args, kwargs], allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"lab.{name}(): arguments must be JSON values ({exc})") from None
        return self._proc().call(name, args, kwargs, server=self._server)

    @property
    def second_server(self) -> "LabProxy":
        """The same process, its calls on another server: ``r`` is the process's client of the box's
        second address (the same Redis behind a proxy of its own, which the grader can pause alone:
        ``box.second_proxy.pause()``).  Skips the test where there is none (a student's REDIS_URL)."""
        proc = self._proc()
        if proc.box.second_proxy is None:
            import pytest

            pytest.skip("a second server needs the lab's private Redis; there is none with REDIS_URL")
        return LabProxy(self._new_process, proc, server=2)

    def traffic(self) -> dict:
        """What this process has sent so far: ``connections``, ``round_trips``, ``commands`` by name
        (the handshake's included), and on the run's keys ``units`` and ``by_command``, a unit being
        one command, or one MULTI ... EXEC block (counted as ``EXEC``), that names a key of the run;
        a pipeline without MULTI is one unit per command.  Read it before and after a
        call to hold a promise such as "one Lua script, one round trip".  Skips the test when the
        run has no fault proxy (a student's own REDIS_URL)."""
        got = self._proc().traffic()
        if got is None:
            import pytest

            pytest.skip("counting round trips needs the lab's private Redis; there is none with REDIS_URL")
        return got

    def call_between(
        self, name: str, args: Sequence, *, after_key: str, between: Callable[[], Any]
    ) -> tuple[Any, bool]:
        """Call ``name(r, *args)`` and force one interleaving: once the call has sent a request
        naming ``after_key`` (a full key name, ``redis.key(...)``), its next request on the run's
        keys waits at the box's fault proxy while the grader runs ``between()`` (its own write, on
        its own connection), then goes on.  A read outside WATCH, then the grader's write, then the
        WATCH: the stale read shows.  Returns (the call's result, or the exception of a call that
        failed; whether ``between`` ran).  A call that sent nothing more after naming the key (one
        script) never waits, and ``between`` does not run.  Skips the test where the grader has no
        proxy in front of Redis (a student's REDIS_URL)."""
        proc = self._proc()
        if proc.box.proxy is None:
            import pytest

            pytest.skip("holding a request needs the lab's private Redis; there is none with REDIS_URL")
        proc.wait_ready()
        proc.hold_after(after_key)
        out: dict = {}

        def work() -> None:
            try:
                out["result"] = proc.call(name, tuple(args), {})
            except CAUGHT as exc:
                out["result"] = exc

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        ran = False
        try:
            while thread.is_alive():
                if proc.hold_state() == "held":
                    ran = True
                    between()
                    break
                thread.join(0.002)
        finally:
            proc.release()
        thread.join()
        if "result" not in out:  # the grader's own thread failed: an error of the test, never a pass
            raise RuntimeError(f"call_between: {name}() ended without a result or a student's error")
        return out["result"], ran

    def output(self) -> str:
        """The end of what the student's code printed so far."""
        return self._proc().output_tail()

    def parallel(self, n: int) -> list["LabProxy"]:
        """``n`` independent proxies (``n`` processes, same Redis, same key prefix), started at once."""
        procs = [self._new_process() for _ in range(n)]
        for proc in procs:
            proc.spawn()
        for proc in procs:
            proc.wait_ready()
        return [LabProxy(self._new_process, proc) for proc in procs]

    def run_concurrently(self, calls: Sequence[tuple], processes: int = 16) -> list[Any]:
        """Run ``[(name, args), (name, args, kwargs), ...]`` over ``processes`` processes at the same
        moment; results in order, with the exception object in place of a call that failed."""
        calls = [(c[0], tuple(c[1]) if len(c) > 1 else (), dict(c[2]) if len(c) > 2 else {}) for c in calls]
        if not calls:
            return []
        proxies = self.parallel(max(1, min(processes, len(calls))))
        n = len(proxies)
        results: list[Any] = [None] * len(calls)
        barrier = threading.Barrier(n)

        def work(k: int) -> None:
            try:
                barrier.wait(timeout=30)
            except threading.BrokenBarrierError:
                pass
            dead: Exception | None = None
            for i in range(k, len(calls), n):
                if dead is not None:  # a process that hung or died is not restarted mid-race
                    results[i] = dead
                    continue
                name, args, kwargs = calls[i]
                try:
                    results[i] = proxies[k].call(name, *args, **kwargs)
                except (StudentTimeout, StudentCrash) as exc:
                    results[i] = dead = exc
                except StudentError as exc:
                    results[i] = exc

        threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for p in proxies:
            p.close()
        return results

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
