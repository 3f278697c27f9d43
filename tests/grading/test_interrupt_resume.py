"""An instructor's Ctrl+C in the middle of a grading, then the same command again: the first run stops
within seconds having written what it graded, leaves nothing running, and the second grades only what
is left, so that every student is graded exactly once and has feedback."""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from gradeproc import grade_command, marked

from redis_course.labs.authoring.model import find_lab
from redis_course.labs.grading.report import read_csv

LAB = find_lab("00")
STUDENTS = 20


def _nothing_left(marker: str, within: float = 10.0) -> set[int]:
    deadline = time.monotonic() + within
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _journal(out: Path) -> list[dict]:
    path = out / "logs" / "runs.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_interrupted_grading_resumes_and_grades_everyone_once(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "results"
    expected = {}
    for n in range(STUDENTS):
        name = f"s{n:02d}"
        (subs / name / "00-demo").mkdir(parents=True)
        source = LAB.starter_file if n % 5 == 0 else LAB.solution_file
        shutil.copy(source, subs / name / "00-demo" / "lab.py")
        expected[name] = 0 if n % 5 == 0 else 8
    marker = uuid.uuid4().hex
    env = dict(os.environ, COURSE_LANG="en", COURSE_TEST_MARK=marker)
    cmd = grade_command(subs, out)
    first = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )  # its own process group: Ctrl+C reaches the whole group
    try:
        deadline = time.monotonic() + 240
        while len([x for x in _journal(out) if x["who"]]) < STUDENTS // 2 - 2 and time.monotonic() < deadline:
            assert first.poll() is None, first.communicate()
            time.sleep(0.1)
        os.killpg(first.pid, signal.SIGINT)  # what a terminal sends on Ctrl+C
        interrupted_at = time.monotonic()
        stdout, stderr = first.communicate(timeout=60)
        stopped_in = time.monotonic() - interrupted_at
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 130, (first.returncode, stdout, stderr)
    assert stopped_in < 15, f"grading went on for {stopped_in:.0f} s after Ctrl+C"
    assert "run the same command again" in stderr and "--restart" in stderr, stderr
    assert "grading [" in stderr, "no progress line went to the file"
    assert not _nothing_left(marker), "a process of the interrupted grading is still running"
    after_first = [x["who"] for x in _journal(out) if x["who"]]
    assert STUDENTS // 2 - 2 <= len(after_first) < STUDENTS, "the interruption did not fall half-way"
    partial = read_csv(out / "grades.csv")
    assert {r.student for r in partial} <= set(after_first)
    assert all(r.points == expected[r.student] for r in partial)
    assert all((out / "feedback" / f"{who}.md").exists() for who in after_first)

    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Resuming" in second.stderr, second.stderr
    assert not _nothing_left(marker)
    graded = collections.Counter(x["who"] for x in _journal(out) if x["who"])
    assert graded == collections.Counter(list(expected)), "some student was graded twice or not at all"
    rows = read_csv(out / "grades.csv")
    assert {r.student: r.points for r in rows} == expected
    assert sorted(p.stem for p in (out / "feedback").glob("*.md")) == sorted(expected)
    assert sorted(p.name for p in (out / "gradescope").iterdir()) == sorted(expected)
