"""Attack: patch time.time, builtins, unittest and pytest internals, then answer wrongly."""

import builtins
import time
import unittest

time.time = lambda: 0.0
time.monotonic = lambda: 0.0
builtins.isinstance = lambda *a: True
builtins.sorted = lambda it, *a, **k: list(range(1, 41))
unittest.TestCase.assertEqual = lambda *a, **k: None
try:
    import _pytest.outcomes
    import _pytest.runner
    import pytest

    pytest.fail = lambda *a, **k: None
    _pytest.outcomes.fail = lambda *a, **k: None
    _pytest.runner.call_and_report = lambda *a, **k: None
except Exception:
    pass
try:
    import redis_course.labs.engine.pytest_plugin as plugin

    plugin._describe = lambda exc: ("passed", None)
except Exception:
    pass


def count_view(r, post_id):
    return -1


def reset(r, post_id):
    return -1
