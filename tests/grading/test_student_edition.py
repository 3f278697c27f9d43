"""The student edition is made for students: its README, its GitHub Classroom workflow, ``check
--solution`` there, and a test command that checks their work and the tools without touching their
Redis beyond its own prefix."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from redis_course.labs.authoring.model import discover, find_lab
from redis_course.labs.publish.release import release
from redis_course.core.servers import PrivateRedis, redis_server_binary

pytestmark = pytest.mark.slow
LABS = [lab for lab in discover() if lab.solution_file.exists()]
#: What a student's README must not talk about, in each language.
INSTRUCTOR_WORDS = {
    "en": ["solution", "hidden", "release", "grade"],
    "ru": ["решени", "скрыт", "оценк", "выпуск"],
    "zh": ["答案", "隐藏", "评分", "发布"],
}


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    return release(tmp_path_factory.mktemp("edition") / "student")


def course(edition: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ, COURSE_ROOT=str(edition), **(env or {}))
    full.pop("REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "redis_course.cli", *args],
        cwd=edition,
        env=full,
        capture_output=True,
        text=True,
        timeout=900,
    )


def sections(readme: str) -> dict[str, str]:
    parts = re.split(r"(?m)^## ", readme)
    names = {"English": "en", "Русский": "ru", "简体中文": "zh"}
    return {names[p.split("\n", 1)[0].strip()]: p for p in parts[1:]}


def test_readme_is_for_students(edition):
    readme = (edition / "README.md").read_text(encoding="utf-8")
    assert readme != (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    by_lang = sections(readme)
    assert set(by_lang) == {"en", "ru", "zh"}
    for lang, text in by_lang.items():
        for needed in (
            "python3 run.py serve",
            "python3 run.py test",
            f"python3 run.py check 01 --lang {lang}",
            "labs/NN-topic/lab.py",
            f"docs/{lang}/NN-topic/",
            f"notebooks/{lang}/",
        ):
            assert needed in text, (lang, needed)
        for word in INSTRUCTOR_WORDS[lang] + INSTRUCTOR_WORDS["en"]:
            assert word not in text.lower(), f"the {lang} README speaks of {word!r}"
    assert "提示: " not in readme and "：" in by_lang["zh"]  # Chinese punctuation in Chinese text


def test_edition_knows_it_is_the_student_edition(edition):
    assert json.loads((edition / "edition.json").read_text())["edition"] == "student"
    res = subprocess.run(
        [sys.executable, "-c", "from redis_course import paths; print(paths.is_student_edition())"],
        env=dict(os.environ, COURSE_ROOT=str(edition)),
        capture_output=True,
        text=True,
    )
    assert res.stdout.strip() == "True"
    from redis_course import paths

    assert not paths.is_student_edition()  # the instructor's repository


@pytest.mark.parametrize(
    "lang,word", [("en", "no reference solutions"), ("ru", "нет эталонных решений"), ("zh", "不包含参考答案")]
)
def test_check_solution_says_there_is_none(edition, lang, word):
    res = course(edition, "check", "01", "--solution", "--lang", lang, env={"COURSE_LANG": lang})
    assert res.returncode != 0 and word in res.stderr, res.stdout + res.stderr
    assert "check 01" in res.stderr and "lab.py" not in res.stdout + res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_classroom_workflow_checks_every_lab_and_reports(edition):
    workflows = sorted(p.name for p in (edition / ".github" / "workflows").iterdir())
    assert workflows == ["classroom.yml"], "instructor workflows would race the Classroom report"
    wf = yaml.safe_load((edition / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    assert wf["name"] == "Autograding Tests" and list(wf["jobs"]) == ["run-autograding-tests"]
    steps = wf["jobs"]["run-autograding-tests"]["steps"]
    checks = {s["id"]: s for s in steps if "id" in s}
    assert sorted(checks) == sorted(f"lab{lab.number}" for lab in discover(edition / "labs"))
    for runner, step in checks.items():
        assert step["run"] == f"python3 run.py check {runner[3:]} --classroom"
    reporter = steps[-1]
    assert reporter["uses"].startswith("classroom-resources/autograding-grading-reporter@")
    assert reporter["with"]["runners"].split(",") == list(checks)
    for runner in checks:
        assert reporter["env"][f"{runner.upper()}_RESULTS"] == f"${{{{steps.{runner}.outputs.result}}}}"


def classroom_result(edition: Path, tmp_path: Path, lab: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "github_output"
    out.write_text("")
    res = course(edition, "check", lab, "--classroom", env={"GITHUB_OUTPUT": str(out)})
    line = [x for x in out.read_text().splitlines() if x.startswith("result=")]
    assert len(line) == 1, res.stdout + res.stderr
    return res, json.loads(base64.b64decode(line[0][len("result=") :]))


def test_classroom_step_reports_the_points_of_check(edition, tmp_path):
    lab, lab_py = find_lab("00"), edition / "labs" / "00-demo" / "lab.py"
    res, data = classroom_result(edition, tmp_path, "00")
    assert res.returncode == 0 and "Total" in res.stdout
    assert data["version"] == 1 and data["status"] == "fail" and data["max_score"] == 5
    assert sum(t["score"] for t in data["tests"]) == 0 and all(t["status"] == "fail" for t in data["tests"])
    starter = lab_py.read_bytes()
    shutil.copy(lab.solution_file, lab_py)
    try:
        res, data = classroom_result(edition, tmp_path, "00")
    finally:
        lab_py.write_bytes(starter)
    assert data["status"] == "pass" and sum(t["score"] for t in data["tests"]) == data["max_score"] == 5


@pytest.mark.skipif(not redis_server_binary(), reason="needs redis-server for a Redis of the student's own")
def test_student_tests_leave_the_students_redis_as_they_found_it(edition, tmp_path):
    """The student edition's test run writes no 10,000 foreign keys and changes none of the student's."""
    import redis

    with PrivateRedis().start() as srv:
        mine = redis.Redis.from_url(srv.url, decode_responses=True, socket_timeout=10)
        mine.set("homework:notes", "mine")
        mine.set("homework:ttl", "1", ex=3600)
        before, started = int(mine.info("stats")["total_commands_processed"]), time.monotonic()
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/student"],
            cwd=edition,
            capture_output=True,
            text=True,
            timeout=600,
            env=dict(os.environ, COURSE_ROOT=str(edition), COURSE_TEST_REDIS_URL=srv.url),
        )
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        commands = int(mine.info("stats")["total_commands_processed"]) - before
        assert commands < 100, f"the student edition's tests sent {commands} commands to the student's Redis"
        assert sorted(mine.keys("*")) == ["homework:notes", "homework:ttl"] and mine.get("homework:notes") == "mine"
        assert 3600 - (time.monotonic() - started) - 2 <= mine.ttl("homework:ttl") <= 3600  # neither kept nor cut


def _names_what_stays_behind(text: str) -> bool:
    """Whether source text names something the release does not ship."""
    from redis_course.labs.publish import release as rel

    names = [*rel.INSTRUCTOR_ONLY, *rel.LAB_PRIVATE, "solution_file", "starter_file", "wrong_files"]
    return (
        any(name in text for name in names if name not in ("wrong", "README.md"))
        or '"README.md"' in text
        or '"wrong"' in text
    )


def _tests_that_read_what_stays_behind(test_file: Path, root: Path) -> list[str]:
    """The node ids (``path::test``) of the tests in ``test_file`` that name, themselves or through a
    module-level fixture, helper or constant they use (at any depth), something the release leaves
    behind; the whole file when a module-level statement does."""
    import ast

    text = test_file.read_text(encoding="utf-8")
    if not _names_what_stays_behind(text):
        return []
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    rel = str(test_file.relative_to(root))
    defs: dict[str, tuple[str, set[str]]] = {}  # module-level name -> (its source, the names it uses)
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        src = "".join(lines[first - 1 : node.end_lineno])
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        used |= {
            a.arg for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for a in n.args.args
        }
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = [
                n.id
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                for n in ast.walk(t)
                if isinstance(n, ast.Name)
            ]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        else:
            if _names_what_stays_behind(src):
                return [rel]
            continue
        for name in targets:
            defs[name] = (src, used)
    tainted = {name for name, (src, _) in defs.items() if _names_what_stays_behind(src)}
    grew = True
    while grew:  # through what each definition uses, to any depth
        grew = False
        for name, (_, used) in defs.items():
            if name not in tainted and used & tainted:
                tainted.add(name)
                grew = True
    if "pytestmark" in tainted:
        return [rel]
    return [f"{rel}::{name}" for name in defs if name in tainted and name.startswith(("test_", "Test"))]


def test_the_editions_own_tests_pass_there(edition):
    """Every test the edition ships is collected there, and every one that names a file the release
    leaves behind (the pages workflow, solutions, hidden tests...), itself or through what it uses,
    passes there.  Only those run: the rest are the same tests as in this checkout, run by this suite."""
    env = dict(os.environ, COURSE_ROOT=str(edition), PYTHONPATH=str(edition / "src"), COURSE_FOREIGN_KEYS="0")
    env.pop("REDIS_URL", None)
    pytest_cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header"]
    collected = subprocess.run(
        [*pytest_cmd, "--collect-only", "tests"], cwd=edition, env=env, capture_output=True, text=True, timeout=600
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-2000:]
    suspects = sorted(
        node for p in (edition / "tests").rglob("test_*.py") for node in _tests_that_read_what_stays_behind(p, edition)
    )
    # the finder finds what it is for: a test that names the pages workflow, one that reaches a solution
    # only through a module-level helper it calls, and not the site build, which names nothing of it
    assert (
        "tests/foundation/test_publish.py::test_the_pages_workflow_builds_from_stored_outputs_and_deploys" in suspects
    )
    assert "tests/lessons/test_06_cluster.py::test_lab_solution_runs_on_the_cluster" in suspects, suspects
    assert not any(s.startswith("tests/foundation/test_publish.py::test_build_with_a_site_url") for s in suspects)
    ran = subprocess.run(
        [*pytest_cmd, "-m", "not browser and not slow", "-x", *suspects],
        cwd=edition,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert re.search(r"\d+ passed", ran.stdout), ran.stdout[-500:]
