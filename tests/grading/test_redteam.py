"""The red-team suite: malicious submissions (tests/grading/redteam/) graded in one batch with honest ones.

Every attack must score 0 while the grader finishes, writes valid output for everyone, grades the
honest submissions exactly, and nothing outside the sandboxes changes.  Attacks that only
namespaces and mounts can stop need the grader to run as root (as CI does) or bubblewrap; without
either they are skipped, and the rest (time, memory, output, exits, pytest tricks, lying objects,
broken modules) still run.  ``redteam/test_paths.py`` and ``redteam/test_limits.py`` run the
attacks that depend on the path on each one (root, bubblewrap as another user, unisolated).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import time
import zipfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from redis_course.labs.grading.grade import grade
from redis_course.labs.authoring.model import find_lab
from redis_course.labs.sandbox import launch as isolation
from redis_course.labs.sandbox.limits import Limits
from redis_course.labs.authoring.wrong import composed_path

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
REDTEAM = HERE / "redteam" / "lab00"
ROOT = HERE.parents[1]
ISOLATION_ONLY = {"read_secrets", "tamper_files", "other_hosts", "fake_results"}
IS_ROOT = os.geteuid() == 0
ISOLATED = isolation.mode() == "bwrap"
#: attacks with a test module of their own in redteam/ (they print what they found, or probe)
OWN_TESTS = {"escape_via_server", "read_around", "daemon", "sleep_under_timeout", "fill_disk", "cgroup_probe", "lua_io"}
ATTACKS = sorted(
    p.stem for p in REDTEAM.glob("*.py") if (ISOLATED or p.stem not in ISOLATION_ONLY) and p.stem not in OWN_TESTS
)
# a lab's budget of 9 s: an attack that spins or hangs in every call is stopped after three calls
# (the call timeout, then the budget), not after all five; honest runs spend well under 1 s there.
# Half a core per box: what spins burns half as much, and is stopped at the same times.
LIMITS = Limits(call_timeout_s=3, start_timeout_s=15, cpu_s=20, memory_mb=1024, nproc=32, lab_budget_s=9, box_cpus=0.5)


def honest(lab):
    return {  # student -> (file, expected points out of 8)
        "honest_solution": (lab.solution_file, 8),
        "honest_reset_keeps_key": (composed_path(lab, "reset_keeps_key"), 7),
        "honest_one_counter": (composed_path(lab, "one_counter_for_all"), 1),
        "honest_starter": (lab.starter_file, 0),
    }


def tree_digest(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def build_submissions(subs: Path, attacks: list[str]) -> None:
    lab = find_lab("00")
    for name in attacks:
        d = subs / name / "00-demo"
        d.mkdir(parents=True)
        shutil.copy(REDTEAM / f"{name}.py", d / "lab.py")
    if "conftest_plugin" in attacks:
        evil = (REDTEAM / "conftest_attack.txt").read_text()
        base = subs / "conftest_plugin"
        for where in (base, base / "00-demo"):
            (where / "conftest.py").write_text(evil)
            (where / "redteam_plugin.py").write_text(evil)
            (where / "pytest.ini").write_text("[pytest]\naddopts = -p redteam_plugin\n")
        (base / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-p redteam_plugin"\n')
    for student, (file, _) in honest(lab).items():
        d = subs / student / "labs" / "00-demo"
        d.mkdir(parents=True)
        shutil.copy(file, d / "lab.py")
    with zipfile.ZipFile(subs / "honest_zip.zip", "w") as zf:
        zf.write(lab.solution_file, "labs/00-demo/lab.py")
        zf.writestr("../../evil.py", "print('zip slip')")
        zf.writestr("/etc/evil.py", "print('absolute')")


def _children() -> list[str]:
    """This process's live children, with their command lines (what a subreaper adopted included);
    those that already ended (zombies) are reaped."""
    out = []
    for tid in os.listdir(f"/proc/{os.getpid()}/task"):
        for pid in Path(f"/proc/{os.getpid()}/task/{tid}/children").read_text().split():
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state == "Z":
                    os.waitpid(int(pid), os.WNOHANG)
                    continue
                out.append(f"{pid}: {Path(f'/proc/{pid}/cmdline').read_bytes()[:200]!r}")
            except (OSError, ChildProcessError):
                pass
    return out


def run_batch(tmp: Path, attacks: list[str], backend: str):
    import ctypes

    subs, out = tmp / "submissions", tmp / "results"
    build_submissions(subs, attacks)
    watched = [ROOT / "src" / "redis_course" / "labs", ROOT / "labs" / "00-demo", subs]
    before = tree_digest(*watched)
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come here
    already = set(_children())
    summary = grade(subs, out, labs=["00-demo"], backend=backend, limits=LIMITS, progress=False, workers=2)
    time.sleep(0.5)
    left = [c for c in _children() if c not in already]
    return {
        "summary": summary,
        "out": out,
        "subs": subs,
        "before": before,
        "after": tree_digest(*watched),
        "left": left,
    }


def grades(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    marker = Path("/tmp/REDTEAM-CONFTEST-LOADED")
    marker.unlink(missing_ok=True)
    return run_batch(tmp_path_factory.mktemp("redteam"), ATTACKS, "auto")


@pytest.mark.parametrize("attack", ATTACKS)
def test_attack_scores_zero(batch, attack):
    row = grades(batch["out"])[attack]
    assert float(row["points"]) == 0, f"{attack} scored {row['points']}/{row['max_points']} ({row['status']})"
    assert float(row["max_points"]) == 8


def test_honest_submissions_are_graded_exactly(batch):
    rows = grades(batch["out"])
    for student, (_, points) in honest(find_lab("00")).items():
        assert float(rows[student]["points"]) == points, (student, rows[student])
        assert rows[student]["status"] == "ok"
    assert float(rows["honest_zip"]["points"]) == 8


def test_every_student_gets_valid_output(batch):
    out = batch["out"]
    rows = grades(out)
    assert set(rows) == set(ATTACKS) | set(honest(find_lab("00"))) | {"honest_zip"}
    for student, row in rows.items():
        gs = json.loads((out / "gradescope" / student / "results.json").read_text(encoding="utf-8"))
        assert gs["score"] == float(row["points"])
        assert len(gs["tests"]) == 5
        for test in gs["tests"]:
            assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
            assert test["status"] in ("passed", "failed")
        suites = ET.parse(out / "junit" / f"{student}.xml").getroot()
        assert suites.tag == "testsuites" and len(suites.findall("testsuite/testcase")) == 5
        assert (out / "feedback" / f"{student}.md").read_text(encoding="utf-8").startswith("# Feedback for")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["students"] == len(rows)


def test_output_folder_holds_only_the_grader_files(batch):
    out = batch["out"]
    assert sorted(p.name for p in out.iterdir()) == [
        "feedback",
        "grades.csv",
        "gradescope",
        "junit",
        "logs",
        "summary.json",
    ]
    assert not Path("/tmp/REDTEAM-CONFTEST-LOADED").exists(), "a submission's conftest.py was loaded"
    for planted in ("/tmp/results.json", "/tmp/grades.csv", "/run/results.json", "/results.json"):
        if Path(planted).exists():
            assert "1000" not in Path(planted).read_text(errors="replace"), f"fake file at {planted}"


def test_nothing_outside_the_sandboxes_changed(batch):
    before, after = batch["before"], batch["after"]
    changed = [p for p in before if after.get(p) != before[p]]
    assert not changed, f"changed or deleted: {changed[:5]}"


def test_timeouts_and_crashes_are_counted(batch):
    s = batch["summary"]
    assert s.students_timed_out >= 3  # infinite loop, sleep, fork bomb
    assert s.students_crashed + s.students_unimportable >= 4  # exits at import, exits in calls, syntax error
    assert s.statuses.get("grader-error", 0) == 0
    assert not s.reference_problems


def test_no_student_process_survives(batch):
    """The batch ran with this process as the subreaper of everything it started: whatever of it
    outlived ``grade`` would now be a child of this process."""
    left = batch["left"]
    assert not left, f"processes of the batch still running: {left}"


@pytest.mark.skipif(not ISOLATED, reason="network isolation needs root or bubblewrap")
def test_the_shared_redis_was_not_reached(batch):
    from redis_course import CourseError, connect

    try:
        shared = connect("redis://127.0.0.1:6379/0", prefix="course:redteam:", socket_timeout=2)
    except CourseError:
        pytest.skip("no Redis at 127.0.0.1:6379 to check")
    assert shared.exists("course:redteam:escaped") == 0


def test_redis_attacks_are_contained_on_fakeredis(tmp_path):
    attacks = ["redis_server_commands", "exit_in_call"] + (["other_hosts"] if ISOLATED else [])
    res = run_batch(tmp_path, attacks, "fakeredis")
    rows = grades(res["out"])
    for attack in attacks:
        assert float(rows[attack]["points"]) == 0, (attack, rows[attack])
    for student, (_, points) in honest(find_lab("00")).items():
        assert float(rows[student]["points"]) == points, (student, rows[student])
    assert res["summary"].backend == "fakeredis"
