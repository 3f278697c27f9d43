"""Findings: student code could read what is beside the checkout and in the grading run, and leave
processes behind.

* Files: the allow-list covered top-level folders but bound back a whole first-level entry for
  each path the child needed (``/work/<x>`` for a checkout at ``/work/x/course``), so sibling clones
  of the checkout (their solutions and hidden tests) and the results folder beside them were
  readable, and the run folder's run.json, results.json and pytest.log sat next to the child's work
  folder.  Now exactly the interpreter, installed packages, the course's ``src/``, the child's work
  folder and its socket's folder are visible, on every isolated path.
* Processes: a submission that forks a daemon (own session, SIGTERM ignored) must not outlive the
  command, on every path, unisolated included.

Each test runs on every grading path this machine can run (see ``paths.py``); the others are
skipped with the reason.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

from redis_course.labs.authoring.model import find_lab

sys.path.insert(0, str(Path(__file__).parent))
from redteam_paths import PATHS, grade_cli, skip_unless_possible  # noqa: E402

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
FORBIDDEN = {
    "sibling",
    "results",
    "submissions",
    "labs",
    ".git",
    "mkdocs.yml",
    "run.json",
    "results.json",
    "pytest.log",
    "pytest.ini",
    "solution.py",
    "grades.csv",
}


def _checkout_copy(dest: Path) -> None:
    """A checkout with the course's source and lab 00 (what grading needs), no .venv."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", dest / "src", ignore=ignore)
    shutil.copytree(find_lab("00").path, dest / "labs" / "00-demo", ignore=ignore)
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    (dest / ".git").mkdir()


@pytest.fixture
def shared():
    """A shared temporary folder (reachable for another user): the grader's checkout, a sibling clone,
    submissions and results side by side."""
    shared = Path(tempfile.mkdtemp(prefix="course-redteam-shared-"))
    os.chmod(shared, 0o755)
    _checkout_copy(shared / "checkout")
    _checkout_copy(shared / "sibling")
    yield shared
    shutil.rmtree(shared, ignore_errors=True)


def _submit(shared: Path, name: str, renames: dict[str, str] | None = None) -> None:
    d = shared / "submissions" / name / "00-demo"
    d.mkdir(parents=True)
    text = (HERE / "lab00" / f"{name}.py").read_text(encoding="utf-8")
    for old, new in (renames or {}).items():
        text = text.replace(old, new)
    (d / "lab.py").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("path", PATHS)
def test_nothing_beside_the_checkout_or_in_the_run_folder_is_readable(shared, path):
    skip_unless_possible(path)
    if path == "none":
        pytest.skip("--no-isolation hides nothing by choice (the instructor's explicit opt-out)")
    _submit(shared, "read_around")
    res = grade_cli(
        path,
        shared / "submissions",
        shared / "results",
        env={"PYTHONPATH": str(shared / "checkout" / "src"), "COURSE_ROOT": str(shared / "checkout")},
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    feedback = (shared / "results" / "feedback" / "read_around.md").read_text(encoding="utf-8")
    assert "read_around ran" in feedback, feedback[-1500:]
    found = [line for line in feedback.splitlines() if line.startswith("FOUND")]
    # a folder on the way to a kept path shows that path's next component only (sb-*, redis, src...)
    leaks = [
        line
        for line in found
        if not line.endswith("/:")
        and (not line.split(": ")[0].endswith("/") or any(name in line.split(": ", 1)[1].split() for name in FORBIDDEN))
    ]
    assert not leaks, leaks


@pytest.mark.parametrize("path", PATHS)
def test_no_process_of_a_submission_outlives_the_command(shared, path):
    skip_unless_possible(path)
    # a name of this test's own: the other worker may be grading a daemon of its own right now
    name = f"rtd-{secrets.token_hex(5)}"  # 14 characters: a process name keeps 15
    _submit(shared, "daemon", {"redteam-daemon": name})
    res = grade_cli(
        path,
        shared / "submissions",
        shared / "results",
        env={"PYTHONPATH": str(shared / "checkout" / "src"), "COURSE_ROOT": str(shared / "checkout")},
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    time.sleep(1)
    left = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == name:
                # a zombie (Z) or a dead task (X) runs nothing: it waits for a parent's wait(), which may be
                # the machine's init, later than this look
                state = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0]
                if state not in ("Z", "X"):
                    left.append(int(entry))
        except OSError:
            pass
    for pid in left:  # leave nothing behind, whatever the verdict
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert not left, f"processes of the submission still running: {left}"


def test_grading_without_isolation_refuses_in_one_sentence(tmp_path, monkeypatch):
    from redis_course.labs.grading.grade import grade
    from redis_course.labs.grading.intake import GradingError

    from redis_course.labs.sandbox import launch

    monkeypatch.setattr(launch, "mode", lambda allow=True: "none")
    (tmp_path / "subs" / "a").mkdir(parents=True)
    with pytest.raises(GradingError) as err:
        grade(tmp_path / "subs", tmp_path / "out", labs=["00"])
    text = str(err.value)
    assert "--no-isolation" in text and text.count(". ") == 0 and "\n" not in text
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("path", ["root", "user"])
def test_isolation_attacks_are_contained_on_the_fakeredis_server(shared, path):
    """The attacks only isolation stops (test_redteam.py runs them as root on redis-server), here on
    the fakeredis server, whose Lua has io and os: it runs behind the same walls as student code."""
    skip_unless_possible(path)
    attacks = ["read_secrets", "other_hosts", "fake_results", "lua_io"]
    for name in attacks:
        _submit(shared, name)
    res = grade_cli(
        path,
        shared / "submissions",
        shared / "results",
        "--backend",
        "fakeredis",
        env={"PYTHONPATH": str(shared / "checkout" / "src"), "COURSE_ROOT": str(shared / "checkout")},
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    import csv

    with open(shared / "results" / "grades.csv", newline="", encoding="utf-8-sig") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    for name in attacks:
        assert float(rows[name]["points"]) == 0, rows[name]
    lua = (shared / "results" / "feedback" / "lua_io.md").read_text(encoding="utf-8")
    leaks = [line for line in lua.splitlines() if line.startswith("LEAK") and "/etc/hostname" not in line]
    assert not leaks, leaks
