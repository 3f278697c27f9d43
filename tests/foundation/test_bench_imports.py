"""The benchmarks in ``bench/`` import what the course has now.

They run by hand, not in the suite (speed claims live there, not in timed tests), so a module that
moves would leave one failing at its first line the next time someone measures.  This reads each
script's imports of the course (``ast``, nothing is run) and resolves every module and name."""

from __future__ import annotations

import ast
import importlib

import pytest

from redis_course import paths

SCRIPTS = sorted((paths.ROOT / "bench").glob("*.py"))


def course_imports(path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) of every ``redis_course`` import in ``path``, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "redis_course":
            out += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "redis_course"]
    return out


def unresolved(path) -> list[str]:
    problems = []
    for line, module, name in course_imports(path):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            problems.append(f"{path.name}:{line}: {module}: {exc}")
            continue
        if name is not None and not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                problems.append(f"{path.name}:{line}: {module} has no {name}")
    return problems


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_a_benchmark_imports_what_the_course_has(script):
    assert not unresolved(script)


def test_a_moved_module_is_seen(tmp_path):
    bad = tmp_path / "bench_old.py"
    bad.write_text("from redis_course.labs.model import discover\nfrom redis_course import no_such_name\n")
    problems = unresolved(bad)
    assert len(problems) == 2 and "redis_course.labs.model" in problems[0] and "no_such_name" in problems[1]
