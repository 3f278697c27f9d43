"""What lab tests import::

    from redis_course.labs.engine.testing import points, hint, StudentError, StudentTimeout

    @points(2)
    @hint("first-view")
    def test_first_view_is_one(lab, redis):
        assert lab.count_view(17) == 1

``student_raises("ValueError")`` checks that the student's function raised that exception type (a
timeout or a crash does not count).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import pytest

from ...l10n import _
from ..sandbox.errors import InjectedCrash, StudentCrash, StudentError, StudentImportError, StudentTimeout

__all__ = [
    "points",
    "hint",
    "contract",
    "student_raises",
    "StudentError",
    "StudentTimeout",
    "StudentCrash",
    "StudentImportError",
    "InjectedCrash",
]


def points(n: float):
    """Mark a test as worth ``n`` points (all or nothing)."""
    if not isinstance(n, (int, float)) or n < 0:
        raise ValueError("points(n) needs a number >= 0")
    return pytest.mark.points(n)


def hint(hint_id: str):
    """Name the hint (an id in the lab's hints.yml) shown to the student when this test fails."""
    return pytest.mark.hint(hint_id)


def contract(*item_ids: str):
    """Name the items of the lab's contract.yml this test checks (``tests/grading/test_contracts.py``
    proves that every item has a test and every name is an item)."""
    if not item_ids or not all(isinstance(i, str) and i for i in item_ids):
        raise ValueError("contract(...) needs one or more item ids")
    return pytest.mark.contract(*item_ids)


@contextlib.contextmanager
def student_raises(type_name: str) -> Iterator[list[StudentError]]:
    """``with student_raises("ValueError"):`` passes only if the student's code raised that type."""
    caught: list[StudentError] = []
    try:
        yield caught
    except StudentError as exc:
        if exc.type == "NotImplementedError" and type_name != exc.type:
            raise  # the function is not written yet: the report says so, not "expected ValueError"
        if exc.type != type_name:
            raise AssertionError(
                _(
                    "expected {expected}, the function raised {type}: {message}",
                    expected=type_name,
                    type=exc.type,
                    message=exc.message,
                )
            ) from None
        caught.append(exc)
    else:
        raise AssertionError(_("expected the function to raise {expected}, it returned normally", expected=type_name))
