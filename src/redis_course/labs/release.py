"""``course release OUT``: write the student edition of the repository.

What changes on the way out:

* ``labs/NN-topic/``: ``lab.py`` (the starter, regenerated from the solution), lab.yml, hints.yml,
  tests/public/ and any other lab file; never solution.py, starter.py, tests/hidden/ or wrong/.
* notebooks: cells tagged ``solution`` are dropped (sources ``notebooks/*.py`` and ``*.ipynb``);
  every other cell keeps its outputs, which the lesson needs.
* pages (``*.md``): ``<!-- BEGIN SOLUTION -->`` … ``<!-- END SOLUTION -->`` blocks are dropped.
* ``.py`` files under notebooks/: ``# BEGIN SOLUTION`` regions become NotImplementedError, as in labs.
* instructor-only: tests/grading/ (red-team submissions, leak tests), bench/grading_bench.py,
  and everything git ignores or builds (.git, .venv, build/, site/, caches).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from .. import paths
from .model import LAB_DIR
from .starter import BEGIN, make_starter

SKIP_TOP = {".git", ".venv", "build", "site", "test-artifacts", ".pytest_cache", "node_modules", ".ci-cache"}
SKIP_NAMES = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".DS_Store"}
INSTRUCTOR_ONLY = {"tests/grading", "bench/grading_bench.py"}
LAB_PRIVATE = {"solution.py", "starter.py", "wrong", "tests/hidden"}
MD_SOLUTION = re.compile(r"[ \t]*<!--\s*BEGIN SOLUTION\s*-->.*?<!--\s*END SOLUTION\s*-->[ \t]*\n?", re.S)
GENERATED_MD = re.compile(r"^docs/[^/]+/[^/]+/(notebook\.md|notebook_files/.*|.*\.ipynb)$")
SOLUTION_TAGS = {"solution", "solutions", "answer"}


class ReleaseError(Exception):
    pass


def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    if parts[0] in SKIP_TOP or any(p in SKIP_NAMES or p.endswith(".egg-info") for p in parts):
        return True
    if rel.endswith((".pyc", ".pyo")) or GENERATED_MD.match(rel):
        return True
    return any(rel == x or rel.startswith(x + "/") for x in INSTRUCTOR_ONLY)


def _lab_private(rel: str) -> bool:
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] != "labs" or not LAB_DIR.match(parts[1]):
        return False
    inner = "/".join(parts[2:])
    return any(inner == x or inner.startswith(x + "/") for x in LAB_PRIVATE)


def strip_markdown(text: str) -> str:
    return MD_SOLUTION.sub("", text)


def strip_percent_script(text: str) -> str:
    """Drop ``# %%`` cells whose tags include ``solution`` from a jupytext py:percent source."""
    cells = re.split(r"(?m)^(?=# %%)", text)
    kept = []
    for cell in cells:
        header = cell.split("\n", 1)[0]
        tags = re.search(r"tags=\[([^\]]*)\]", header)
        names = {t.strip().strip("'\"") for t in tags.group(1).split(",")} if tags else set()
        if header.startswith("# %%") and names & SOLUTION_TAGS:
            continue
        kept.append(cell)
    out = "".join(kept)
    return make_starter(out) if any(BEGIN.match(line) for line in out.splitlines()) else out


def strip_notebook(text: str) -> str:
    nb = json.loads(text)
    nb["cells"] = [c for c in nb.get("cells", [])
                   if not set(c.get("metadata", {}).get("tags", [])) & SOLUTION_TAGS]
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


def release(out: Path, *, force: bool = False, root: Path | None = None) -> Path:
    root = (root or paths.ROOT).resolve()
    out = out.resolve()
    if out == root or root in out.parents and not _skipped(str(out.relative_to(root))):
        raise ReleaseError(f"{out} is inside the repository; write the student edition elsewhere")
    if out.exists():
        if not force and any(out.iterdir()):
            raise ReleaseError(f"{out} exists and is not empty (use --force to replace it)")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for src in sorted(root.rglob("*")):
        rel = src.relative_to(root).as_posix()
        if _skipped(rel) or _lab_private(rel) or src.is_dir() or src.is_symlink():
            continue
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".md"):
            dest.write_text(strip_markdown(src.read_text(encoding="utf-8")), encoding="utf-8")
        elif rel.startswith("notebooks/") and rel.endswith(".ipynb"):
            dest.write_text(strip_notebook(src.read_text(encoding="utf-8")), encoding="utf-8")
        elif rel.startswith("notebooks/") and rel.endswith(".py"):
            dest.write_text(strip_percent_script(src.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            shutil.copy2(src, dest)
    for lab_dir in sorted((root / "labs").glob("*")) if (root / "labs").is_dir() else []:
        solution = lab_dir / "solution.py"
        if LAB_DIR.match(lab_dir.name) and solution.exists():
            (out / "labs" / lab_dir.name).mkdir(parents=True, exist_ok=True)
            (out / "labs" / lab_dir.name / "lab.py").write_text(
                make_starter(solution.read_text(encoding="utf-8"), str(solution)), encoding="utf-8")
    return out
