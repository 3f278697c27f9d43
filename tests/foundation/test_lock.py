"""The lock files: fresh, consistent with each other, and exactly what is installed.

``requirements/all.txt`` is what ``python3 run.py test`` (and so CI) installs; ``requirements/site.txt``
is the part that ``serve`` and ``build`` need, at the same versions; ``binder/requirements.txt`` is
all.txt without the development tools.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import re

from packaging.requirements import Requirement

from redis_course import paths


def _run_py():
    spec = importlib.util.spec_from_file_location("course_run_py", paths.ROOT / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RUN = _run_py()


def pins(path) -> dict[str, str]:
    """{normalised name: version} of the pins in a lock whose markers apply to this interpreter."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith((" ", "#", "-")):
            continue
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate():
            (spec,) = req.specifier
            out[re.sub(r"[-_.]+", "-", req.name).lower()] = spec.version
    return out


def test_locks_were_made_from_this_pyproject():
    assert RUN.locks_fresh(), (
        "pyproject.toml's dependencies changed: run `python3 run.py lock` and commit requirements/"
    )


def test_a_changed_dependency_makes_the_locks_stale(monkeypatch, tmp_path):
    text = (paths.ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(text.replace('"pyyaml>=6",', '"pyyaml>=6", "six",'), encoding="utf-8")
    before = RUN.deps_digest()
    monkeypatch.setattr(RUN, "ROOT", tmp_path)
    assert RUN.deps_digest() != before and not RUN.locks_fresh()


def test_the_site_lock_is_a_subset_of_the_full_lock_at_the_same_versions():
    site, full = pins(RUN.LOCK["site"]), pins(RUN.LOCK["all"])
    assert {"mkdocs", "mkdocs-material", "nbconvert", "jieba"} <= set(site)
    assert "fakeredis" not in site and "jupyterlab" not in site  # the site is built from stored outputs
    assert {name: full.get(name) for name in site} == site


def test_installed_versions_are_the_locked_ones():
    """What runs the tests is exactly the locked set (CI installs it with `uv pip sync`)."""
    wrong = {}
    for name, version in pins(RUN.LOCK["all"]).items():
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            have = None
        if have != version:
            wrong[name] = (have, version)
    assert not wrong, f"installed (have, locked): {wrong}; run `python3 run.py test` to sync .venv/"


def test_binder_requirements_are_the_lock_without_dev_tools(tmp_path, monkeypatch):
    committed = RUN.BINDER_REQS.read_text(encoding="utf-8")
    monkeypatch.setattr(RUN, "BINDER_REQS", tmp_path / "requirements.txt")
    RUN.write_binder_requirements()
    assert RUN.BINDER_REQS.read_text(encoding="utf-8") == committed, "run `python3 run.py lock`"
    binder = pins(RUN.BINDER_REQS)
    assert binder["fakeredis"] == pins(RUN.LOCK["all"])["fakeredis"] and "playwright" not in binder
