"""Shared fixtures: the two backends every notebook and lab is run on.

``backend_url`` is parametrised over ``fakeredis`` (None) and ``redis`` (the real server at
``COURSE_TEST_REDIS_URL``, default redis://127.0.0.1:6379/0).  When the real server is down the
``redis`` cases are skipped, unless ``COURSE_REQUIRE_REAL_REDIS=1`` (CI sets it): then they fail.
"""
from __future__ import annotations

import os
import sys

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


# ---------------------------------------------------------------- foreign keys stay untouched
# When the real server is up, 10,000 keys that are not the course's are written under a unique
# `foreign:<hex>:` prefix before the first test and checked after the last one: any key deleted,
# changed, added or with a TTL that grew fails the whole run.  COURSE_FOREIGN_KEYS=0 skips this, and
# so does the student edition: a student's Redis is not a place to write 10,000 keys.

_foreign: dict = {}


def pytest_sessionstart(session):
    from redis_course.paths import is_student_edition

    if hasattr(session.config, "workerinput") or os.environ.get("COURSE_FOREIGN_KEYS") == "0":
        return  # xdist workers: the controller does it once
    if is_student_edition():
        return
    if not real_redis_up():
        return
    from foundation import foreign_keys

    prefix = foreign_keys.new_prefix()
    r = connect(REAL_URL, prefix=prefix, decode_responses=False)
    _foreign.update(client=r, snapshot=foreign_keys.seed(r, prefix))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        # "no tests" must never pass for a green run (CI would report success having checked nothing)
        print("\nno tests were collected: that is a failure for this course", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not _foreign:
        return
    from foundation import foreign_keys

    r, snap = _foreign.pop("client"), _foreign.pop("snapshot")
    try:
        problems = foreign_keys.verify(r, snap)
    except Exception as exc:  # the server went away, for instance: that is a failure too
        problems = [f"could not check the foreign keys: {type(exc).__name__}: {exc}"]
    finally:
        try:
            foreign_keys.delete(r, snap.prefix)
        except Exception:
            pass
    if problems:
        lines = [f"FOREIGN KEYS CHANGED: {len(problems)} problem(s) with the {len(snap.keys)} keys under "
                 f"{snap.prefix} that the course does not own:"]
        lines += [f"  {p}" for p in problems[:50]]
        lines += [f"  ... and {len(problems) - 50} more"] if len(problems) > 50 else []
        report = session.config.pluginmanager.get_plugin("terminalreporter")
        if report:
            report.ensure_newline()
        for line in lines:
            if report:
                report.write_line(line, red=True, bold=True)
            else:
                print(line, file=sys.stderr)
        session.exitstatus = 1
