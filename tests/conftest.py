"""Shared fixtures: the two backends every notebook and lab is run on.

``backend_url`` is parametrised over ``fakeredis`` (None) and ``redis`` (the real server at
``COURSE_TEST_REDIS_URL``, default redis://127.0.0.1:6379/0).  When the real server is down the
``redis`` cases are skipped, unless ``COURSE_REQUIRE_REAL_REDIS=1`` (CI sets it): then they fail.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

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


# ---------------------------------------------------------------- xdist: expensive fixtures stay whole
# `run.py test` runs pytest-xdist with `--dist loadgroup`: the tests of one xdist_group run in one
# worker.  A fixture of module scope or wider that the course's tests define is made once in every
# worker that uses it, so the tests that share one instance (a module's tests for a module fixture,
# every user of a session fixture: the site build and the browser) are put in one group here.  Tests
# that name their own group keep it: the lab grading matrices and the notebook runs are grouped per
# lab and per lesson, and their fixtures (PER_GROUP) do the work of a group when it first asks.  Two
# groups sharing any other such fixture would make it twice: that stops the run at collection.

TESTS = Path(__file__).resolve().parent
# module fixtures that compute per xdist group, lazily; and the escape suite's clean-up, which each
# worker does for what its own groups made
PER_GROUP = {"outcomes", "composed_dir", "runs", "escape_cleanup"}


def shared_fixtures(item) -> set[str]:
    """The instances of the course's own wider-than-function fixtures that ``item`` uses, by key."""
    info = getattr(item, "_fixtureinfo", None)
    module = item.nodeid.split("::", 1)[0]
    keys = set()
    for name, defs in info.name2fixturedefs.items() if info else ():
        if name in PER_GROUP:
            continue
        for fd in defs:
            try:
                where = Path(inspect.getsourcefile(fd.func) or "").resolve()
            except TypeError:
                continue
            if fd.scope == "function" or TESTS not in where.parents:
                continue
            keys.add(
                name
                if fd.scope == "session"
                else f"{module}::{name}"
                if fd.scope == "module"
                else f"{item.nodeid.rsplit('::', 1)[0]}::{name}"
            )
    return keys


def _explicit_group(item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    return None if mark is None else str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


def xdist_groups(items) -> dict[str, str]:
    """nodeid → group for every test that shares a fixture instance or names a group.  Tests linked by
    a shared fixture (directly or through others) form one group: the explicit group of one of them,
    "site" when they use the site build, else the first one's module.  ValueError when the tests of
    one fixture instance were put in two different groups by hand."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    keys = {item.nodeid: shared_fixtures(item) for item in items}
    for item in items:
        for key in keys[item.nodeid]:
            parent[find(item.nodeid)] = find("fixture:" + key)
    explicit: dict[str, set[str]] = {}
    for item in items:
        group = _explicit_group(item)
        if group:
            explicit.setdefault(find(item.nodeid), set()).add(group)
    out, first = {}, {}
    for item in items:
        root = find(item.nodeid)
        named = explicit.get(root, set())
        if len(named) > 1:
            raise ValueError(
                f"{item.nodeid} shares a fixture with tests of the xdist groups {sorted(named)}: "
                f"that fixture would be made once per group; give them one group"
            )
        if named:
            out[item.nodeid] = next(iter(named))
        elif keys[item.nodeid]:
            module = first.setdefault(root, item.nodeid.split("::", 1)[0])
            out[item.nodeid] = "site" if find("fixture:built_site") == root else module
    return out


# xdist tells the controller a test's group by renaming the test to `<nodeid>@<group>` on the worker;
# pytest 9 derives node ids from a structured id, so that rename is lost and loadgroup would hand out
# every test on its own.  So each worker writes the groups it computed to a file named by the
# controller (COURSE_XDIST_GROUPS, set before the workers start), and the controller schedules with
# LoadGroupScheduling reading the group of each test from there.
GROUPS_ENV = "COURSE_XDIST_GROUPS"


def pytest_configure(config):
    if config.getoption("dist", "no") == "loadgroup" and not hasattr(config, "workerinput"):
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="course-xdist-groups-"))
        os.environ[GROUPS_ENV] = str(folder)
        config.add_cleanup(lambda: __import__("shutil").rmtree(folder, ignore_errors=True))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    try:
        groups = xdist_groups(items)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    for item in items:
        if item.nodeid in groups and not _explicit_group(item):
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    folder = os.environ.get(GROUPS_ENV)
    if folder and hasattr(config, "workerinput"):
        import json

        out = Path(folder) / f"{config.workerinput['workerid']}.json"
        out.with_suffix(".tmp").write_text(json.dumps(groups), encoding="utf-8")
        out.with_suffix(".tmp").replace(out)


@pytest.hookimpl(optionalhook=True)  # known only where xdist is loaded
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist", "no") != "loadgroup" or not os.environ.get(GROUPS_ENV):
        return None
    import json

    from xdist.scheduler import LoadGroupScheduling

    folder = Path(os.environ[GROUPS_ENV])

    durations = _durations()

    class CourseGroupScheduling(LoadGroupScheduling):
        """loadgroup with the groups the workers wrote (they all collect the same tests), the longest
        group first (by tests/durations.json): a long group is never left for the end, when the other
        workers have nothing left to do."""

        groups: dict | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # read once the workers have collected (scheduling starts after that)
                found = sorted(folder.glob("*.json"))
                type(self).groups = json.loads(found[0].read_text(encoding="utf-8")) if found else {}
            return self.groups.get(nodeid) or super()._split_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            longest = max(self.workqueue, key=lambda scope: group_seconds(self.workqueue[scope], durations))
            self.workqueue.move_to_end(longest, last=False)
            super()._assign_work_unit(node)

    return CourseGroupScheduling(config, log)


DURATIONS = TESTS / "durations.json"  # bench/suite_times.py --write-durations, from a whole run's JUnit XML
UNTIMED_S = 0.2  # a test that is not there: new, or under half a second when the file was written


def _durations() -> dict[str, float]:
    import json

    try:
        return json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def group_seconds(nodeids, durations: dict[str, float]) -> float:
    """How long a group's tests are expected to take, from the last recorded run."""
    return sum(durations.get(n, UNTIMED_S) for n in nodeids)


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
        lines = [
            f"FOREIGN KEYS CHANGED: {len(problems)} problem(s) with the {len(snap.keys)} keys under "
            f"{snap.prefix} that the course does not own:"
        ]
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
