"""The layout holds: the layers of ``src/redis_course`` (``[tool.importlinter]`` in pyproject.toml)
and the lint rules (``[tool.ruff]``) over the course's Python.  Each check is also shown to fail on a
copy of the sources with one crossing planted, so a check that stopped looking would be seen."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from redis_course import paths

ROOT = paths.ROOT
BIN = Path(sys.executable).parent


def _lint_imports(src: Path) -> subprocess.CompletedProcess:
    exe = BIN / "lint-imports"
    if not exe.exists():
        pytest.fail("import-linter is not installed: python3 run.py test installs it from requirements/all.txt")
    return subprocess.run(
        [str(exe), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=src,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_no_module_crosses_a_layer():
    res = _lint_imports(ROOT / "src")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


PLANTED = [  # (module, the import planted at its end, what the check must say)
    (
        "core/compat.py",
        "from ..labs.grading import grade",
        "redis_course.core is not allowed to import redis_course.labs",
    ),
    (
        "core/compat.py",
        "from . import backend",
        "redis_course.core.compat is not allowed to import redis_course.core.backend",
    ),
    ("l10n/messages.py", "from ..core import backend", "redis_course.l10n is not allowed to import redis_course.core"),
    ("i18n/catalogs.py", "from ..quiz import parity", "redis_course.i18n is not allowed to import redis_course.quiz"),
    (
        "i18n/glossary.py",
        "from . import terms",
        "redis_course.i18n.glossary is not allowed to import redis_course.i18n.terms",
    ),
    ("i18n/glossary.py", "from ..site import build", "redis_course.i18n is not allowed to import redis_course.site"),
    (
        "site/webfont.py",
        "from . import build",
        "redis_course.site.webfont is not allowed to import redis_course.site.build",
    ),
    ("paths.py", "from . import l10n", "redis_course.paths is not allowed to import redis_course.l10n"),
    ("charts.py", "from .lessons import ids", "redis_course.charts is not allowed to import redis_course.lessons"),
    (
        "labs/sandbox/limits.py",
        "from ..engine import runner",
        "redis_course.labs.sandbox is not allowed to import redis_course.labs.engine",
    ),
    (
        "labs/check/selfcheck.py",
        "from ..grading import report",
        "redis_course.labs.check is not allowed to import redis_course.labs.grading",
    ),
    (
        "labs/grading/grade.py",
        "from ..publish import release",
        "redis_course.labs.grading is not allowed to import redis_course.labs.publish",
    ),
]


@pytest.mark.parametrize("module, line, said", PLANTED, ids=[m for m, _, _ in PLANTED])
def test_a_crossing_planted_in_a_copy_is_found(tmp_path, module, line, said):
    """A package importing one above it (the core the labs, the reader's language the core, the
    translation checks the quiz or the site, paths anything), a module of a package importing one
    above it inside (compat the client, the glossary the term base, the web font the build), or a lab
    subpackage importing one above it or beside it, is what the layers forbid: the check says so."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "redis_course",
        src / "redis_course",
        ignore=shutil.ignore_patterns("__pycache__", "*.po", "*.mo", "*.otf", "*.mjs"),
    )
    target = src / "redis_course" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    res = _lint_imports(src)
    assert res.returncode != 0 and said in res.stdout, res.stdout[-3000:]


def test_every_file_the_course_names_by_path_exists():
    """Lists of the course's own files by path (what makes a stored notebook stale, what the browser
    console ships) name files that exist: a module moved to another package is not silently left out."""
    from redis_course.notebooks.execute import OUTPUT_CODE, PKG
    from redis_course.webconsole.assets import COURSE_MODULES, PACKAGE

    assert [p for p in OUTPUT_CODE if not any(PKG.glob(p))] == []
    assert [p for p in COURSE_MODULES if not (PACKAGE / p).is_file()] == []


def _ruff(*args: str) -> subprocess.CompletedProcess:
    exe = BIN / "ruff"
    if not exe.exists():
        pytest.fail("ruff is not installed: python3 run.py test installs it from requirements/all.txt")
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_python_passes_the_lint_rules():
    res = _ruff("check", "--no-cache", "src", "tests", "bench", "run.py")
    assert res.returncode == 0, res.stdout[-4000:]


def test_the_lint_sees_a_planted_mistake(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef f():\n    return undefined_name\n", encoding="utf-8")
    res = _ruff("check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad))
    assert res.returncode != 0 and "F401" in res.stdout and "F821" in res.stdout, res.stdout


def test_the_python_is_formatted():
    res = _ruff("format", "--check", "--no-cache", "src", "tests", "bench", "run.py")
    assert res.returncode == 0, "run .venv/bin/ruff format src tests bench run.py\n" + res.stdout[-4000:]


def test_the_format_check_sees_a_planted_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = {  'a':1 }\n", encoding="utf-8")
    res = _ruff("format", "--check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad))
    assert res.returncode == 1 and "bad.py" in res.stdout, res.stdout
