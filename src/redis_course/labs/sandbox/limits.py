"""What one student process may use: resource limits, and the wall-time budget of a lab's run.

:class:`Limits` is set per grading run (command line, lab.yml's timeout, a test); :class:`Budget`
counts the wall time spent in student code over a whole run, whatever the number of calls.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass

from .errors import StudentTimeout

#: The longest the grader's memory watchdog waits between two looks at a box's memory where no
#: cgroup holds it (seconds); it looks again sooner the nearer the box is to its threshold.
WATCH_PERIOD_S = 0.15
#: The shortest wait between two looks (seconds).
WATCH_MIN_PERIOD_S = 0.005
#: How fast the watchdog assumes a box can grow (bytes per second: faulting in fresh pages on every
#: core of a two-core machine, with room to spare; measured here 0.4-0.8 GiB/s): it looks again
#: before a box growing so fast could pass its threshold, never later than WATCH_PERIOD_S.
WATCH_RATE = 5 << 30
#: The part of a box's memory limit the watchdog keeps for what grows while it looks and kills (or
#: waits for the CPU on a busy machine): it stops the box once the sum passes ``memory_mb`` less
#: this share (896 of 1,024 MiB: 25 ms at WATCH_RATE).
WATCH_HEADROOM = 8


@dataclass
class Limits:
    """Resource limits of one student process (all configurable from the command line or a test)."""

    call_timeout_s: float = 10.0  # wall time for one function call
    start_timeout_s: float = 20.0  # wall time to start and import the module
    cpu_s: float = 60.0  # CPU seconds over the process's whole life
    memory_mb: int = 1024  # address space
    nproc: int = 32  # processes and threads
    fsize_mb: int = 16  # largest file it may write (its output included)
    nofile: int = 32  # open files (each may hold a kernel buffer: see box.MemoryWatch)
    max_message: int = 1 << 20  # largest reply accepted, bytes
    tmp_mb: int = 64  # writable space (a tmpfs) when isolated
    lab_budget_s: float = 90.0  # wall time all calls of one lab's run may take together
    box_cpus: float = 1.0  # cores the whole box (its processes and its Redis) may use at once, where a cgroup holds it

    def to_dict(self) -> dict:
        return asdict(self)


class Budget:
    """The wall time one lab's run may spend in student code (calls and imports), whatever the
    number of calls: time counts while at least one call is under way (calls at once count once).
    One per grading process: a run is one process."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.used, self.active, self.since = seconds, 0.0, 0, 0.0
        self._lock = threading.Lock()

    def left(self) -> float:
        with self._lock:
            busy = time.monotonic() - self.since if self.active else 0.0
            return self.seconds - self.used - busy

    def __enter__(self) -> "Budget":
        with self._lock:
            if self.active == 0:
                self.since = time.monotonic()
            self.active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.active -= 1
            if self.active == 0:
                self.used += time.monotonic() - self.since


_budgets: dict[float, Budget] = {}


def process_budget(seconds: float) -> Budget:
    """This process's budget (a grading process runs one lab for one student)."""
    if seconds not in _budgets:
        _budgets[seconds] = Budget(seconds)
    return _budgets[seconds]


def new_budgets() -> None:
    """Every budget starts again: the next file graded in this process (:func:`..runner.run_variants`)."""
    _budgets.clear()


class BudgetExhausted(StudentTimeout):
    """The lab's time budget ran out: no more student code runs in this run."""

    def __init__(self, function: str, seconds: float) -> None:
        super().__init__(function, seconds)
        self.args = (f"{function}: the lab's time budget of {seconds:g} s for all calls ran out",)
