"""``course gradescope LAB --out FILE.zip``: the zip Gradescope runs, tried on a local folder laid out as
Gradescope's ``/autograder`` (``AUTOGRADER_ROOT``): the reference solution gets full marks, the starter 0."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from redis_course.labs.authoring.model import find_lab

pytestmark = pytest.mark.slow


def course(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "redis_course.cli", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> dict[str, Path]:
    zips = {}
    for lab in ("01", "00"):
        out = tmp_path_factory.mktemp("gradescope") / f"autograder-{lab}.zip"
        res = course("gradescope", lab, "--out", str(out))
        assert res.returncode == 0 and out.is_file(), res.stdout + res.stderr
        zips[lab] = out
    return zips


def run_autograder(
    zip_path: Path, root: Path, submission: dict[str, Path | str], extra_env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, dict | None]:
    """Unpack the zip as Gradescope does (/autograder/source), hand in ``submission``, run run_autograder."""
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
        for info in zf.infolist():  # extractall drops the modes; Gradescope keeps them
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777 or 0o644)
    (root / "submission").mkdir()
    for rel, src in submission.items():
        dest = root / "submission" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest) if isinstance(src, Path) else dest.write_text(src)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, **(extra_env or {}))
    env.pop("COURSE_ROOT", None)
    res = subprocess.run(
        [str(root / "source" / "run_autograder")], capture_output=True, text=True, env=env, timeout=600, cwd=root
    )
    results = root / "results" / "results.json"
    return res, json.loads(results.read_text(encoding="utf-8")) if results.exists() else None


def test_the_zip_holds_what_gradescope_needs_and_no_solution(autograder_zip):
    with zipfile.ZipFile(autograder_zip["01"]) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[script].external_attr >> 16) & 0o111, f"{script} is not executable"
    names = set(infos)
    assert {
        "requirements.txt",
        "course/autograder.json",
        "course/src/redis_course/labs/engine/runner.py",
        "course/labs/01-incr/lab.yml",
        "course/labs/01-incr/starter.py",
    } <= names
    lab = find_lab("01")
    for f in lab.test_files("public") + lab.test_files("hidden"):
        assert f"course/labs/01-incr/tests/{f.parent.name}/{f.name}" in names
    assert not [n for n in names if n.endswith("solution.py") or "/wrong/" in n or "__pycache__" in n]
    with zipfile.ZipFile(autograder_zip["01"]) as zf:
        reqs = zf.read("requirements.txt").decode()
    assert "fakeredis==" in reqs and "redis==" in reqs and "pytest==" in reqs


def test_setup_sh_is_valid_bash(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip["01"]) as zf:
        (tmp_path / "setup.sh").write_bytes(zf.read("setup.sh"))
    assert subprocess.run(["bash", "-n", str(tmp_path / "setup.sh")]).returncode == 0


def test_reference_solution_gets_full_marks(autograder_zip, tmp_path):
    lab = find_lab("01")
    res, results = run_autograder(autograder_zip["01"], tmp_path / "autograder", {"lab.py": lab.solution_file})
    assert res.returncode == 0 and results, res.stdout + res.stderr
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    assert all(t["status"] == "passed" for t in results["tests"])


def test_starter_gets_zero(autograder_zip, tmp_path):
    lab = find_lab("01")
    res, results = run_autograder(
        autograder_zip["01"], tmp_path / "autograder", {"labs/01-incr/lab.py": lab.starter_file}
    )
    assert res.returncode == 0 and results, res.stdout + res.stderr
    assert results["score"] == 0 and sum(t["max_score"] for t in results["tests"]) > 0
    assert any("NotImplementedError" in t["output"] or "your code here" in t["output"] for t in results["tests"])


def test_nothing_handed_in_lists_every_test_at_zero(autograder_zip, tmp_path):
    res, results = run_autograder(autograder_zip["00"], tmp_path / "autograder", {"notes.txt": "no code"})
    assert res.returncode == 0 and results, res.stdout + res.stderr
    assert results["score"] == 0 and sum(t["max_score"] for t in results["tests"]) == 8
    assert "missing" in results["output"]


def test_the_zips_own_grader_runs(autograder_zip, tmp_path):
    """Without the copy of the grader inside the zip, run_autograder must fail, not use another one."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip["00"]) as zf:
        zf.extractall(root / "source")
    shutil.rmtree(root / "source" / "course" / "src" / "redis_course" / "labs")
    (root / "submission").mkdir()
    shutil.copy(find_lab("00").solution_file, root / "submission" / "lab.py")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable)
    res = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True, env=env, timeout=600
    )
    assert res.returncode != 0 and not (root / "results" / "results.json").exists(), res.stdout


def test_gradescopes_default_image_grades_as_it_should(autograder_zip, tmp_path):
    """Gradescope's default image, simulated: a root container where no namespace can be made
    (COURSE_BWRAP empty, COURSE_CONTAINER=1) and a Redis 6.2 redis-server first on PATH.  The
    container is the box, the grader says so, and the reference gets full marks, the starter 0."""
    from test_redis_versions import _redis62

    redis62 = Path(_redis62(None))
    env = {"COURSE_BWRAP": "", "COURSE_CONTAINER": "1", "PATH": f"{redis62.parent}:{os.environ.get('PATH', '')}"}
    lab = find_lab("01")
    res, results = run_autograder(autograder_zip["01"], tmp_path / "ref", {"lab.py": lab.solution_file}, env)
    assert res.returncode == 0 and results, res.stdout + res.stderr
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0, results["output"][-2000:]
    assert "container" in results.get("output", "") + res.stdout, results.get("output", "")[-1500:]
    res, results = run_autograder(
        autograder_zip["01"], tmp_path / "starter", {"labs/01-incr/lab.py": lab.starter_file}, env
    )
    assert res.returncode == 0 and results and results["score"] == 0, res.stdout + res.stderr
