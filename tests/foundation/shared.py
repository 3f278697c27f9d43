"""The root tests/conftest.py as a module, whatever other conftest.py was imported last.

pytest imports every conftest.py under the name ``conftest`` and drops the previous one from
sys.modules, so ``from conftest import ...`` can pick tests/site/conftest.py instead of ours.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def _load():
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and Path(f).resolve() == _ROOT_CONFTEST:
            return mod
    spec = importlib.util.spec_from_file_location("_course_root_conftest", _ROOT_CONFTEST)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_conftest = _load()
REAL_URL: str = _conftest.REAL_URL
require_real_redis = _conftest.require_real_redis
real_redis_up = _conftest.real_redis_up


def private_server_or_skip(what: str):
    """A private ``redis-server`` (a context manager) to check ``what`` on real Redis; without one the
    test is skipped, and in CI (COURSE_REQUIRE_REAL_REDIS=1) it fails."""
    import os

    import pytest

    from redis_course.core.servers import private_redis, redis_server_binary

    if not redis_server_binary():
        if os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1":
            pytest.fail(f"redis-server is required (COURSE_REQUIRE_REAL_REDIS=1) to check {what} on real Redis")
        pytest.skip(f"redis-server is not installed: {what} are checked on fakeredis only")
    return private_redis()
