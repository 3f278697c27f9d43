"""Grading as an instructor meets it: intake of folders and zips, an empty or missing submissions
folder, regrading one student into an existing RESULTS, the logs of failed runs, the summary's words."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from redis_course.labs.grading.grade import grade
from redis_course.labs.grading.intake import GradingError, collect
from redis_course.labs.authoring.model import find_lab
from redis_course.labs.grading.report import GradeRow, read_csv
from redis_course.labs.grading.summary import Summary

LAB = find_lab("00")
IS_ROOT = os.geteuid() == 0


def course(*args: str, lang: str = "en") -> subprocess.CompletedProcess:
    env = dict(os.environ, COURSE_LANG=lang)
    return subprocess.run(
        [sys.executable, "-m", "redis_course.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_collect_takes_only_lab_files_and_refuses_links_and_zip_slip(tmp_path):
    subs, stage = tmp_path / "subs", tmp_path / "stage"
    (subs / "ann" / "00-demo").mkdir(parents=True)
    (subs / "ann" / "00-demo" / "lab.py").write_text("x = 1\n")
    (subs / "ann" / "00-demo" / "conftest.py").write_text("raise SystemExit\n")
    (subs / "ben" / "00-demo").mkdir(parents=True)
    (subs / "ben" / "00-demo" / "lab.py").symlink_to("/etc/passwd")
    with zipfile.ZipFile(subs / "cat.zip", "w") as zf:
        zf.writestr("../../00-demo/lab.py", "evil")
        zf.writestr("labs/00-demo/lab.py", "y = 2\n")
    (subs / "big.zip").write_bytes(b"not a zip")
    got = {s.student.name: s for s in collect(subs, stage, [LAB])}
    assert got["ann"].files["00-demo"].read_text() == "x = 1\n"
    assert not got["ben"].files and "refused" in got["ben"].problems[0]
    assert got["cat"].files["00-demo"].read_text() == "y = 2\n"
    assert any("unsafe path" in p.lower() for p in got["cat"].problems)
    assert not got["big"].files and got["big"].problems
    assert sorted(p.name for p in stage.rglob("*") if p.is_file()) == ["00-demo.py", "00-demo.py"]


@pytest.mark.parametrize("lang,word", [("en", "nothing to grade"), ("ru", "нечего проверять"), ("zh", "没有可评分")])
def test_an_empty_submissions_folder_is_an_error(tmp_path, lang, word):
    (tmp_path / "subs" / ".git").mkdir(parents=True)  # hidden entries are not students
    (tmp_path / "subs" / "notes.txt").write_text("not a submission")
    res = course("grade", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), lang=lang)
    assert res.returncode != 0 and word in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert "Graded 0" not in res.stdout and not (tmp_path / "out").exists()


def test_a_missing_submissions_folder_is_an_error(tmp_path):
    res = course("grade", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"))
    assert res.returncode != 0 and "does not exist" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    with pytest.raises(GradingError):
        grade(tmp_path / "nowhere", tmp_path / "out")


def test_regrading_needs_an_existing_results_folder_and_a_known_student(tmp_path):
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    res = course("grade", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--student", "ann")
    assert res.returncode != 0 and "grades.csv" in res.stderr and len(res.stderr.strip().splitlines()) == 1


ROWS = [
    GradeRow(f"s{i}", "00-demo", p, 8, s)
    for i, (p, s) in enumerate([(8, "ok"), (0, "timeout"), (0, "crash"), (3, "ok"), (0, "missing")])
]


@pytest.mark.parametrize(
    "lang,expected",
    [
        ("en", ["Graded 5 students (4 lab runs)", "with 1 worker", "1 student timed out", "1 student crashed"]),
        (
            "ru",
            [
                "Проверено 5 студентов (4 запуска)",
                "1 процесс",
                "1 студент превысил лимит времени",
                "у 1 студента упал код",
            ],
        ),
        ("zh", ["已评分 5 名学生（4 次实验运行）", "1 个进程", "1 名学生超时", "1 名学生的代码崩溃"]),
    ],
)
def test_the_summary_speaks_the_instructors_language_with_plural_forms(monkeypatch, lang, expected):
    monkeypatch.setenv("COURSE_LANG", lang)
    s = Summary.from_rows(ROWS, seconds=2.0, workers=1, backend="fakeredis", out=Path("/r"), reference_problems=[])
    text = s.render()
    for phrase in expected:
        assert phrase in text, text
    assert s.students == 5 and s.lab_runs == 4 and s.students_timed_out == 1 and s.students_crashed == 1


@pytest.mark.parametrize(
    "n,phrase",
    [
        (1, "Проверен 1 студент"),
        (2, "Проверено 2 студента"),
        (5, "Проверено 5 студентов"),
        (11, "Проверено 11 студентов"),
        (21, "Проверен 21 студент"),
        (22, "Проверено 22 студента"),
    ],
)
def test_russian_counts_use_all_three_plural_forms(monkeypatch, n, phrase):
    monkeypatch.setenv("COURSE_LANG", "ru")
    rows = [GradeRow(f"s{i}", "00-demo", 1, 8, "ok") for i in range(n)]
    s = Summary.from_rows(rows, seconds=1.0, workers=2, backend="x", out=Path("/r"), reference_problems=[])
    assert s.render().splitlines()[0].startswith(phrase + " (")


# ---------------------------------------------------------------- regrade one student, keep logs
READER = """
import os as _os
_FOUND = []
for _p in {paths!r}:
    try:
        _FOUND.append(open(_p).read()[:80] if _os.path.isfile(_p) else repr(_os.listdir(_p)))
    except OSError:
        pass
print("looked for logs:", _FOUND)
if _FOUND:
    def count_view(r, post_id):
        raise RuntimeError("LEAKED " + repr(_FOUND))
"""


def digest(out: Path, skip: str) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and skip not in p.parts
        and p.stem != skip
        and p.name not in ("grades.csv", "summary.json", "runs.jsonl")
    }  # runs.jsonl: the journal records the regrade


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    base = tmp_path_factory.mktemp("regrade")
    subs, out = base / "subs", base / "results"
    for name, source in (("ann", LAB.solution_file), ("Борис", LAB.starter_file), ("cat", None)):
        (subs / name / "00-demo").mkdir(parents=True)
        if source:
            shutil.copy(source, subs / name / "00-demo" / "lab.py")
    (subs / "cat" / "00-demo" / "lab.py").write_text("raise SystemExit(3)\n")
    first = grade(subs, out, labs=["00-demo"], progress=False, workers=2)
    before = {
        "rows": read_csv(out / "grades.csv"),
        "files": digest(out, "Борис"),
        "journal": (out / "logs" / "runs.jsonl").read_text(encoding="utf-8").splitlines(),
        "mtimes": {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()},
    }
    log = out / "logs" / "students" / "cat" / "00-demo.log"
    reader = LAB.solution_file.read_text() + READER.format(paths=[str(log), str(out / "logs"), str(out)])
    (subs / "Борис" / "00-demo" / "lab.py").write_text(reader)
    res = course("grade", str(subs), "--out", str(out), "--student", "Борис", "--no-progress")
    return {"out": out, "first": first, "before": before, "res": res, "log": log}


def test_regrade_updates_only_that_students_rows_and_files(regraded):
    out, before, res = regraded["out"], regraded["before"], regraded["res"]
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Regraded Борис: 8 of 8 points." in res.stdout
    assert "grades.csv now holds 3 students (3 lab runs)." in res.stdout and "per minute" not in res.stdout
    rows = read_csv(out / "grades.csv")
    assert [r.student for r in rows] == [r.student for r in before["rows"]] == ["ann", "cat", "Борис"]
    assert {r.student: r.points for r in rows} == {"ann": 8, "cat": 0, "Борис": 8}
    assert [r for r in rows if r.student != "Борис"] == [r for r in before["rows"] if r.student != "Борис"]
    assert digest(out, "Борис") == before["files"]
    for p, mtime in before["mtimes"].items():
        if "Борис" not in str(p) and p.name not in ("grades.csv", "summary.json", "runs.jsonl"):
            assert p.stat().st_mtime_ns == mtime, f"{p} was rewritten"
    journal = (out / "logs" / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    assert journal[: len(before["journal"])] == before["journal"]  # the regrade's result is appended
    assert [json.loads(line)["who"] for line in journal[len(before["journal"]) :]] == ["Борис"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["students"] == 3 and summary["mean_percent"] == round(200 / 3, 1)
    assert summary["regraded"] == [{"student": "Борис", "points": 8, "max_points": 8}]


def test_logs_of_failed_runs_are_kept_for_the_instructor_only(regraded):
    out, log = regraded["out"], regraded["log"]
    assert regraded["first"].logs == 1 and log.is_file()
    assert "SystemExit" in log.read_text(encoding="utf-8", errors="replace") or log.stat().st_size > 0
    assert (out / "logs").stat().st_mode & 0o077 == 0 and log.stat().st_mode & 0o077 == 0
    assert not (out / "logs" / "students" / "ann").exists()  # runs that ended ok leave no log


@pytest.mark.skipif(not IS_ROOT, reason="only the isolated grader (root) keeps RESULTS away from student code")
def test_student_code_cannot_read_the_logs_or_results(regraded, capsys):
    out, log = regraded["out"], regraded["log"]
    feedback = (out / "feedback" / "Борис.md").read_text(encoding="utf-8")
    assert "LEAKED" not in feedback and "Score: **8 / 8**" in feedback
    probe: dict = {}
    exec(READER.format(paths=[str(log), str(out / "logs"), str(out)]), probe)  # the same code, unsandboxed,
    assert len(probe["_FOUND"]) == 3  # finds all three


def test_the_summary_names_the_isolation_used(regraded):
    from redis_course.labs.grading.grade import describe_isolation, isolation_mode

    out, res = regraded["out"], regraded["res"]
    assert f"Isolation of student code: {describe_isolation(isolation_mode())}." in res.stdout, res.stdout
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["isolation"] == isolation_mode()


def test_doctor_names_the_isolation_grading_would_use():
    from redis_course.labs.grading.grade import describe_isolation, isolation_mode

    res = course("doctor")
    line = next((x for x in res.stdout.splitlines() if "grading isolation" in x), "")
    assert describe_isolation(isolation_mode()) in line, res.stdout


def test_doctor_says_what_bounds_a_boxs_memory():
    """A cgroup where the grader may write one; else the grader's memory watchdog (as an ordinary
    user on cgroup v1: run as ``nobody`` when the tests are root)."""
    from redis_course.labs.sandbox.cgroups import cgroup_version

    probe = (
        "from redis_course.doctor import checks; print(next(r[2] for r in checks() if r[1] == 'grading memory limit'))"
    )
    mine = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COURSE_LANG": "en"},
    )
    assert mine.stdout.strip() == (
        f"a cgroup {cgroup_version()} per box" if cgroup_version() else "the grader's memory watchdog"
    ), mine.stdout + mine.stderr
    if os.geteuid() == 0:
        here = Path(__file__).parent / "redteam"
        sys.path.insert(0, str(here))
        from redteam_paths import nobody

        uid, gid = nobody()
        other = subprocess.run(
            [sys.executable, str(here / "as_user.py"), str(uid), str(gid), sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
            env={**os.environ, "COURSE_LANG": "en", "HOME": "/nonexistent"},
        )
        if not os.access("/sys/fs/cgroup/cgroup.controllers", os.F_OK):  # v1: nobody may write none
            assert other.stdout.strip() == "the grader's memory watchdog", other.stdout + other.stderr[-2000:]


def test_without_lab_only_the_labs_handed_in_are_graded(tmp_path, capsys):
    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("ann", "ben"):
        (subs / name / "00-demo").mkdir(parents=True)
        shutil.copy(LAB.solution_file, subs / name / "00-demo" / "lab.py")
    (subs / "cat").mkdir()  # handed in nothing: graded missing in the labs the others handed in
    summary = grade(subs, out, progress=False, workers=2)
    rows = read_csv(out / "grades.csv")
    assert {r.lab for r in rows} == {"00-demo"} and len(rows) == 3, rows
    assert {r.student: r.status for r in rows}["cat"] == "missing" and summary.students == 3
    assert "Grading the labs handed in: 00-demo" in capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["labs"] == ["00-demo"]


VARIANT_LEAK = """
import os, secrets, time
_MINE = "/tmp/variant-" + secrets.token_hex(4)
open(_MINE, "w").close()
if os.fork() == 0:  # a process left behind that keeps writing, as long as it lives
    os.closerange(3, 1024)
    while True:
        open(_MINE + "-still", "w").close()
        time.sleep(0.02)
"""
VARIANT_LOOKS = """
import glob
if glob.glob("/tmp/variant-*"):
    raise ImportError("a file of the file graded before me is still here")
"""
VARIANT_GET_SET = """

def count_view(r, post_id):
    k = r.key("views", "post", post_id)
    n = int(r.get(k) or 0) + 1
    r.set(k, n)
    return n
"""


@pytest.mark.parametrize("backend", ["redis-server", "fakeredis"])
def test_variants_are_each_graded_as_alone_and_stop_at_their_first_failure(tmp_path, backend):
    """run_variants (the known-wrong matrix): files graded in one grader process and one box are
    graded as alone: a file or a process left behind by the file before fails the next one's import,
    each imports its own source, and a wrong file stops at its first failure with the tests it names
    run first."""
    from redis_course.labs.engine.runner import run_lab, run_variants

    solution = LAB.solution_file.read_text(encoding="utf-8")
    files = {"leak": solution + VARIANT_LEAK, "looks": solution + VARIANT_LOOKS, "get_set": solution + VARIANT_GET_SET}
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    first = ("test_views_from_many_processes_add_up",)
    leak, looks, get_set = run_variants(
        LAB,
        [(tmp_path / "leak.py", ()), (tmp_path / "looks.py", ()), (tmp_path / "get_set.py", first)],
        backend=backend,
    )
    assert (leak.status, looks.status) == ("ok", "ok"), (leak.message, looks.message)
    assert leak.points == leak.max_points == looks.points > 0, [t.message for t in looks.tests if not t.passed]
    ran = [t for t in get_set.tests if t.outcome != "not-run"]
    assert [t.name for t in ran] == [first[0]] and ran[0].outcome == "failed", [(t.name, t.outcome) for t in ran]
    alone = run_lab(LAB, tmp_path / "looks.py", visibility=("public", "hidden"), backend=backend)
    assert [(t.name, t.outcome) for t in alone.tests] == [(t.name, t.outcome) for t in looks.tests]


def test_a_variants_run_finds_failures_without_shrinking_them():
    """A known-wrong file needs only to fail: the grader of a variants run loads Hypothesis settings
    without the shrink and explain phases, before the lab's tests make theirs (model_settings), and a
    student's run keeps them (a student's report shows the smallest failing example)."""
    probe = (
        "import json\n"
        "from redis_course.labs.engine import pytest_plugin\n"
        "from redis_course.labs.engine.modeltest import model_settings\n"
        "student = model_settings(3).phases\n"
        "pytest_plugin._find_without_shrinking()\n"
        "variants = model_settings(3).phases\n"
        "print(json.dumps([[p.name for p in student], [p.name for p in variants]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    student, variants = json.loads(out.stdout)
    assert {"shrink", "explain", "generate"} <= set(student), student
    assert "generate" in variants and not {"shrink", "explain"} & set(variants), variants
