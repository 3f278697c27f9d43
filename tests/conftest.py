"""Shared fixtures: the two backends every notebook and lab is run on.

``backend_url`` is parametrised over ``fakeredis`` (None) and ``redis`` (the real server at
``COURSE_TEST_REDIS_URL``, default redis://127.0.0.1:6379/0).  When the real server is down the
``redis`` cases are skipped, unless ``COURSE_REQUIRE_REAL_REDIS=1`` (CI sets it): then they fail.
"""
from __future__ import annotations

import os

import pytest

from redis_course import CourseError, connect

REAL_URL = os.environ.get("COURSE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REQUIRE_REAL = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"


def real_redis_up() -> bool:
    try:
        connect(REAL_URL, prefix="course:probe:", socket_timeout=2)
        return True
    except CourseError:
        return False


_REAL_UP = None


def require_real_redis() -> str:
    """The real server's URL, or skip (fail in CI) when it is not reachable."""
    global _REAL_UP
    if _REAL_UP is None:
        _REAL_UP = real_redis_up()
    if not _REAL_UP:
        if REQUIRE_REAL:
            pytest.fail(f"the real Redis at {REAL_URL} is required (COURSE_REQUIRE_REAL_REDIS=1) but is not up")
        pytest.skip(f"no real Redis at {REAL_URL}")
    return REAL_URL


@pytest.fixture(params=["fakeredis", "redis"])
def backend_url(request) -> str | None:
    """None for fakeredis, the real server's URL for redis."""
    if request.param == "fakeredis":
        return None
    return require_real_redis()


@pytest.fixture
def r(backend_url):
    """A client on each backend with a fresh key prefix; its keys are deleted afterwards."""
    import secrets

    client = connect(backend_url if backend_url else "", prefix=f"course:test:{secrets.token_hex(4)}:")
    yield client
    client.cleanup()
