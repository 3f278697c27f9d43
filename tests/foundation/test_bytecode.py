"""The installed packages and the course's modules are compiled to bytecode (run.py installs with
``uv pip sync --compile-bytecode`` and compiles src/; ``course test`` compiles src/ again): with
PYTHONDONTWRITEBYTECODE=1, as on the machines that run the suite, nothing else would write a .pyc and
every grader, kernel and CLI process would compile its imports from source."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from redis_course import paths


def _stale_or_missing(sources) -> list[str]:
    out = []
    for src in sources:
        pyc = Path(importlib.util.cache_from_source(str(src)))
        if not pyc.exists() or pyc.stat().st_mtime < Path(src).stat().st_mtime:
            out.append(str(src))
    return out


@pytest.mark.parametrize("module", ["pytest", "_pytest.python", "redis.client", "fakeredis", "nbformat", "mkdocs"])
def test_installed_packages_have_bytecode(module):
    src = importlib.util.find_spec(module).origin
    assert not _stale_or_missing([src]), (
        f"{src} has no .pyc for Python {sys.version_info[0]}.{sys.version_info[1]}: "
        "run `python3 run.py test`, which installs with compiled bytecode"
    )


def test_course_test_compiles_the_course_modules_first(tmp_path, monkeypatch):
    from redis_course import cli

    module = tmp_path / "src" / "pkg" / "mod.py"
    module.parent.mkdir(parents=True)
    module.write_text("X = 1\n", encoding="utf-8")
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # as PYTHONDONTWRITEBYTECODE=1 makes it
    ran = []
    monkeypatch.setattr(cli, "_call", lambda cmd, **kw: ran.append(cmd) or 0)
    assert cli.main(["test", "-k", "nothing"]) == 0
    assert ran and ran[0][1:3] == ["-m", "pytest"]
    assert not _stale_or_missing([module])
