"""Binder / repo2docker picks the Python the locked requirements are made for.

With a ``binder/`` folder, repo2docker reads only what is in it: the root ``pyproject.toml``'s
``requires-python`` is not seen, and without ``binder/runtime.txt`` it takes its own default Python
(3.10 in the releases of 2024-2026), on which the locked pins do not install."""

from __future__ import annotations

import re
import tomllib

from redis_course import paths

BINDER = paths.ROOT / "binder"
REPO2DOCKER_DEFAULT = "3.10"  # repo2docker's major_pythons["3"]: its choice when runtime.txt names none


def repo2docker_python(folder) -> str:
    """The Python version repo2docker's Python buildpack chooses for ``folder`` (its runtime.txt rule:
    ``python-X.Y[.Z]`` gives X.Y, ``python-3`` or anything else its default)."""
    runtime_txt = folder / "runtime.txt"
    runtime = runtime_txt.read_text(encoding="utf-8").strip() if runtime_txt.exists() else ""
    if not runtime.startswith("python-"):
        return REPO2DOCKER_DEFAULT
    parts = runtime.split("-", 1)[1].split(".")
    return REPO2DOCKER_DEFAULT if len(parts) == 1 else ".".join(parts[:2])


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def test_binder_gets_the_python_the_locks_are_made_for():
    chosen = repo2docker_python(BINDER)
    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    minimum = re.fullmatch(r">=\s*([\d.]+)", project["requires-python"]).group(1)
    assert _tuple(chosen) >= _tuple(minimum), f"repo2docker would use Python {chosen}; the course needs {minimum}+"
    locked_for = re.search(r'"--python-version",\s*"([\d.]+)"', (paths.ROOT / "run.py").read_text(encoding="utf-8"))
    assert locked_for and chosen == locked_for.group(1), (chosen, locked_for)


def test_the_rule_is_repo2dockers(tmp_path):
    assert repo2docker_python(tmp_path) == REPO2DOCKER_DEFAULT
    for text, expected in (
        ("python-3.12.4\n", "3.12"),
        ("python-3", REPO2DOCKER_DEFAULT),
        ("r-4.3-2024-01-01", REPO2DOCKER_DEFAULT),
    ):
        (tmp_path / "runtime.txt").write_text(text)
        assert repo2docker_python(tmp_path) == expected, text
