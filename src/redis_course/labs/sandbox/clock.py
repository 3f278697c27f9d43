"""The machine's wall clock as the student's process sees it, shifted by the grader
(``lab.faults.set_machine_clock(offset_s)``): a machine whose clock is wrong, in that process only.

:func:`install` replaces ``time.time`` and ``time.time_ns`` with functions that add the current
offset (0 until :func:`set_machine_clock` changes it); the grader's side of the child process calls
it before the student's module is imported, so ``from time import time`` is shifted too.  No Redis
command: the server, another process, keeps its own clock, which is the point of the fault.  The
monotonic clocks are not shifted (they measure durations, not the date).  ``datetime.now()`` is not
shifted either: ``datetime`` is a C type whose methods cannot be replaced from Python.

Written here rather than with the ``time-machine`` package: the student's process runs isolated
(``python -I -S``, only redis, fakeredis and this package on its path), and two functions of the
``time`` module are all a skewed clock needs.  Cost: one addition per call.
"""

from __future__ import annotations

import time

_offset_ns = 0
_real_time, _real_time_ns = time.time, time.time_ns


def _time() -> float:
    return (_real_time_ns() + _offset_ns) / 1e9


def _time_ns() -> int:
    return _real_time_ns() + _offset_ns


def install() -> None:
    """Route ``time.time`` and ``time.time_ns`` of this process through the offset."""
    time.time, time.time_ns = _time, _time_ns


def set_machine_clock(offset_s: float | None) -> float:
    """Make this process's wall clock run ``offset_s`` seconds ahead (negative: behind); None or 0:
    the real clock.  Returns the shifted ``time.time()``, to show the change took effect."""
    global _offset_ns
    _offset_ns = int(round(float(offset_s or 0) * 1e9))
    return _time()
