"""The xdist groups of tests/conftest.py: tests that share an instance of an expensive fixture run in one
worker, so that `run.py test` on two workers builds the site once and grades each lab once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import xdist_groups


def _fixture():  # a fixture function defined under tests/ (what the grouping looks at)
    pass


class FakeItem:
    """What the grouping reads from a pytest item: its id, its xdist_group mark, its fixtures' scopes."""

    def __init__(self, nodeid: str, group: str | None = None, **fixtures: str):
        self.nodeid = nodeid
        self._group = group
        self._fixtureinfo = SimpleNamespace(
            name2fixturedefs={
                name: [
                    SimpleNamespace(
                        func=_fixture if scope != "plugin" else pytest.fixture, scope=scope.replace("plugin", "session")
                    )
                ]
                for name, scope in fixtures.items()
            }
        )

    def get_closest_marker(self, name):
        return SimpleNamespace(args=(self._group,), kwargs={}) if name == "xdist_group" and self._group else None


def test_tests_sharing_a_fixture_instance_share_a_group():
    items = [
        FakeItem("tests/a/test_x.py::test_1", server="module"),
        FakeItem("tests/a/test_x.py::test_2", server="module", tmp_path="function"),
        FakeItem("tests/a/test_x.py::test_alone", tmp_path="function"),
        FakeItem("tests/a/test_y.py::test_own_server", server="module"),  # another module: another instance
        FakeItem("tests/site/test_a.py::test_page", built_site="session"),
        FakeItem("tests/site/test_b.py::test_click", site_url="session", browser="session"),
        FakeItem("tests/site/test_b.py::test_both", site_url="session", built_site="session"),
        FakeItem("tests/a/test_z.py::test_plugin_session", tmp_path_factory="plugin"),  # not the course's
    ]
    groups = xdist_groups(items)
    assert groups == {
        "tests/a/test_x.py::test_1": "tests/a/test_x.py",
        "tests/a/test_x.py::test_2": "tests/a/test_x.py",
        "tests/a/test_y.py::test_own_server": "tests/a/test_y.py",
        "tests/site/test_a.py::test_page": "site",
        "tests/site/test_b.py::test_click": "site",
        "tests/site/test_b.py::test_both": "site",
    }


def test_named_groups_are_kept_and_a_split_fixture_is_refused():
    lazy = [
        FakeItem("tests/g/test_labs.py::test_solution[00]", "lab-00", outcomes="module"),
        FakeItem("tests/g/test_labs.py::test_solution[01]", "lab-01", outcomes="module"),
        FakeItem("tests/g/test_labs.py::test_complete[00]"),
    ]
    assert xdist_groups(lazy) == {
        "tests/g/test_labs.py::test_solution[00]": "lab-00",
        "tests/g/test_labs.py::test_solution[01]": "lab-01",
    }
    split = [
        FakeItem("tests/g/test_m.py::test_1", "one", server="module"),
        FakeItem("tests/g/test_m.py::test_2", "two", server="module"),
    ]
    with pytest.raises(ValueError, match=r"xdist groups \['one', 'two'\]"):
        xdist_groups(split)
    joined = [
        FakeItem("tests/g/test_m.py::test_1", "one", server="module"),
        FakeItem("tests/g/test_m.py::test_2", server="module"),
    ]
    assert set(xdist_groups(joined).values()) == {"one"}


MODULE = """
import os, pytest

@pytest.fixture(scope="module")
def made(tmp_path_factory):
    with open(os.environ["MADE_LOG"], "a") as f:
        f.write("made\\n")

@pytest.mark.parametrize("n", range(6))
def test_shares(made, n):
    with open(os.environ["RUN_LOG"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
"""


ORDERED = """
import os, pytest

def log(what):
    with open(os.environ["RUN_LOG"], "a") as f:
        f.write(what + "\\n")

@pytest.mark.xdist_group("many")
@pytest.mark.parametrize("n", range(6))
def test_many_quick(n):
    log("many")

@pytest.mark.xdist_group("long")
@pytest.mark.parametrize("n", range(2))
def test_few_long(n):
    log("long")
"""


def _run_xdist(tmp_path, tests, workers: int, **env):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-n", str(workers), "--dist", "loadgroup", "-q", "-p", "no:cacheprovider"]
        + ["--rootdir", str(tmp_path), str(tests)],
        cwd=tmp_path,
        env={**os.environ, "COURSE_FOREIGN_KEYS": "0", "RUN_LOG": str(tmp_path / "ran"), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_longest_group_starts_first(tmp_path):
    """The scheduler hands out the group that took longest in the recorded run (tests/durations.json)
    before groups with more tests: xdist alone would start the six quick tests first."""
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(Path(__file__).parents[1] / "conftest.py", tests / "conftest.py")
    (tests / "test_order.py").write_text(ORDERED, encoding="utf-8")
    long = {f"tests/test_order.py::test_few_long[{n}]": 40.0 for n in range(2)}
    (tests / "durations.json").write_text(json.dumps(long), encoding="utf-8")
    res = _run_xdist(tmp_path, tests, 1)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert (tmp_path / "ran").read_text().splitlines() == ["long"] * 2 + ["many"] * 6


@pytest.mark.slow
def test_two_workers_make_a_module_fixture_once(tmp_path):
    """The real thing: pytest-xdist on two workers with this conftest runs a module's tests in one worker."""
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(Path(__file__).parents[1] / "conftest.py", tests / "conftest.py")
    (tests / "test_mod.py").write_text(MODULE, encoding="utf-8")
    res = _run_xdist(tmp_path, tests, 2, MADE_LOG=str(tmp_path / "made"))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "12 passed" in res.stdout
    assert (tmp_path / "made").read_text().splitlines() == ["made"]
    workers = (tmp_path / "ran").read_text().splitlines()
    assert len(workers) == 6 and len(set(workers)) == 1, workers
