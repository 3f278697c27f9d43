"""What a lab test sees when the student's code does not return normally.

None of these is a subclass of another: a test written as ``pytest.raises(StudentError)`` must not
pass because the student's code hung (:class:`StudentTimeout`) or killed its own process
(:class:`StudentCrash`).
"""

from __future__ import annotations


class StudentError(Exception):
    """The student's function raised an exception (``type`` is its class name, e.g. ``"ValueError"``)."""

    def __init__(self, type: str, message: str = "", function: str = "", traceback: str = "") -> None:
        self.type = type
        self.message = message
        self.function = function
        self.traceback = traceback
        super().__init__(f"{function + ': ' if function else ''}{type}: {message}")


class StudentTimeout(Exception):
    """The student's function did not return within the lab's time limit; its process was killed."""

    def __init__(self, function: str, seconds: float) -> None:
        self.function = function
        self.seconds = seconds
        super().__init__(f"{function}: no answer within {seconds:g} s (the process was stopped)")


class StudentCrash(Exception):
    """The student's process ended or misbehaved (exit, SystemExit, KeyboardInterrupt, killed by a limit)."""

    def __init__(self, function: str, detail: str) -> None:
        self.function = function
        self.detail = detail
        super().__init__(f"{function + ': ' if function else ''}{detail}")


class StudentImportError(StudentCrash):
    """The student's module could not be loaded (syntax error, exception or exit at import time)."""


class InjectedCrash(Exception):
    """The student's process died where the test made it die (``lab.faults.arm_crash``, ``crash_at``).

    Raised only when the grader's own fault fired: an exception the student's code raises itself,
    whatever its name, is a :class:`StudentError`."""

    def __init__(self, function: str, detail: str) -> None:
        self.function = function
        self.detail = detail
        super().__init__(f"{function + ': ' if function else ''}{detail}")
