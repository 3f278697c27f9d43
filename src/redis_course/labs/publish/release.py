"""``course release OUT``: write the student edition of the repository.

What changes on the way out:

* ``labs/NN-topic/``: ``lab.py`` (the starter, regenerated from the solution, its docstrings in the
  edition's language with ``--lang``), lab.yml, hints.yml, tests/public/ and any other lab file; never
  solution.py, starter.py, tests/hidden/ or wrong/.
* the catalogs (``locale/*/LC_MESSAGES/*.po``): an entry used only by files that stay behind (hidden
  tests, solutions, known-wrong code, the starters' docstrings, already in lab.py) is dropped, and
  no entry names such a file, and a fuzzy entry's string (a guess Babel copied from a similar entry,
  never shown) is emptied, so a hidden test's title or message never ships, in any language.
* notebooks: cells tagged ``solution`` are dropped (sources ``notebooks/*.py`` and ``*.ipynb``);
  every other cell keeps its outputs, which the lesson needs.
* pages (``*.md``): ``<!-- BEGIN SOLUTION -->`` … ``<!-- END SOLUTION -->`` blocks are dropped.
* ``.py`` files under notebooks/: ``# BEGIN SOLUTION`` regions become NotImplementedError, as in labs.
* instructor-only: tests/grading/ (red-team submissions, leak tests), bench/grading_bench.py, the
  mutation bench and its list of equivalent mutants (diffs of the solutions), labs/README.md, the
  instructor's README.md, INSTRUCTORS.md and CONTRIBUTING.md, CI workflows (.github/), and everything
  git ignores or builds (.git, .venv, build/, site/, caches).  ARCHITECTURE.md ships: it is made from
  the docstrings of src/, which ships too.
* added (:mod:`.edition`): a README for students, ``edition.json`` (``{"edition": "student"}``: the
  test suite and the tools know where they run) and ``.github/workflows/classroom.yml`` (GitHub
  Classroom autograding with ``check --classroom``).

A release is a list of steps (:data:`STEPS`) over one :class:`Edition`; files are copied through
:data:`TRANSFORMS`.  A new option is a field of ``Edition`` read by the step that needs it; new
files are a new step.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ... import paths
from ...core.backend import CourseError
from ...l10n import _
from .edition import write_student_files
from ..authoring.model import LAB_DIR, discover
from ..authoring.starter import BEGIN, make_starter, translate_docstrings

SKIP_TOP = {".git", ".venv", "build", "site", "test-artifacts", ".pytest_cache", "node_modules", ".ci-cache"}
SKIP_NAMES = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".DS_Store"}
INSTRUCTOR_ONLY = {
    "tests/grading",
    "bench/grading_bench.py",
    "README.md",
    "labs/README.md",
    ".github",
    "INSTRUCTORS.md",
    "CONTRIBUTING.md",  # grading, solutions, wrong/: not for students
    "bench/mutation_bench.py",
    "bench/mutation_equivalent.txt",
}  # mutants are diffs of solutions
LAB_PRIVATE = {"solution.py", "starter.py", "wrong", "tests/hidden", "contract.yml"}  # contract.yml names hidden tests
MD_SOLUTION = re.compile(r"[ \t]*<!--\s*BEGIN SOLUTION\s*-->.*?<!--\s*END SOLUTION\s*-->[ \t]*\n?", re.S)
GENERATED_MD = re.compile(r"^docs/[^/]+/[^/]+/(notebook\.md|notebook_files/.*|.*\.ipynb)$")
SOLUTION_TAGS = {"solution", "solutions", "answer"}


class ReleaseError(CourseError):
    """The student edition cannot be written there: one sentence."""


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
    nb["cells"] = [c for c in nb.get("cells", []) if not set(c.get("metadata", {}).get("tags", [])) & SOLUTION_TAGS]
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


@dataclass
class Edition:
    """One student edition being written: where from, where to, with which options."""

    root: Path
    out: Path
    force: bool = False
    lang: str = "en"  # the language of lab.py's docstrings, the README's first section and `check`


#: How a copied file changes on the way out: (does it apply to this relative path, new text from old).
TRANSFORMS: list[tuple[Callable[[str], bool], Callable[[str], str]]] = [
    (lambda rel: rel.endswith(".md"), strip_markdown),
    (lambda rel: rel.startswith("notebooks/") and rel.endswith(".ipynb"), strip_notebook),
    (lambda rel: rel.startswith("notebooks/") and rel.endswith(".py"), strip_percent_script),
]


def prepare(ed: Edition) -> None:
    """Refuse an OUT inside the repository or not empty (unless forced); create it."""
    root, out = ed.root, ed.out
    if out == root or root in out.parents and not _skipped(str(out.relative_to(root))):
        raise ReleaseError(_("{out} is inside the course's repository; write the student edition elsewhere.", out=out))
    if out.exists():
        if not ed.force and (not out.is_dir() or any(out.iterdir())):
            raise ReleaseError(_("{out} exists and is not empty (use --force to replace it).", out=out))
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    out.mkdir(parents=True)


def copy_files(ed: Edition) -> None:
    """Every file a student gets, through :data:`TRANSFORMS`."""
    for src in sorted(ed.root.rglob("*")):
        rel = src.relative_to(ed.root).as_posix()
        if _skipped(rel) or _lab_private(rel) or src.is_dir() or src.is_symlink():
            continue
        dest = ed.out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        change = next((f for applies, f in TRANSFORMS if applies(rel)), None)
        if change is None:
            shutil.copy2(src, dest)
        else:
            dest.write_text(change(src.read_text(encoding="utf-8")), encoding="utf-8")


def write_labs(ed: Edition) -> None:
    """Each lab's ``lab.py``: the starter, made from the solution."""
    labs = ed.root / "labs"
    for lab_dir in sorted(labs.glob("*")) if labs.is_dir() else []:
        solution = lab_dir / "solution.py"
        if LAB_DIR.match(lab_dir.name) and solution.exists():
            (ed.out / "labs" / lab_dir.name).mkdir(parents=True, exist_ok=True)
            starter = make_starter(solution.read_text(encoding="utf-8"), str(solution))
            (ed.out / "labs" / lab_dir.name / "lab.py").write_text(
                translate_docstrings(starter, ed.lang), encoding="utf-8"
            )


def _private_location(path: str) -> bool:
    return _lab_private(path) or _skipped(path)


def _blank_strings(lines: list[str]) -> list[str]:
    out, in_str = [], False
    for ln in lines:
        if ln.startswith("msgstr"):
            out.append(ln.split(" ", 1)[0] + ' ""')
            in_str = True
        elif in_str and ln.startswith('"'):
            continue
        else:
            out.append(ln)
            in_str = False
    return out


def strip_catalog(text: str) -> str:
    """A .po file without the entries only private files use, and without naming those files."""
    out = []
    for entry in re.split(r"\n{2,}", text.strip("\n")):
        lines = entry.split("\n")
        if (
            not out
            and any(ln.startswith('msgid ""') for ln in lines)
            and not any(ln.startswith("msgctxt") for ln in lines)
        ):
            out.append(entry)  # the header
            continue
        locations = [loc for ln in lines if ln.startswith("#: ") for loc in ln[3:].split()]
        files = [loc.rsplit(":", 1)[0] if loc.rsplit(":", 1)[-1].isdigit() else loc for loc in locations]
        public = [f for f in files if not _private_location(f)]
        if files and not public:
            continue  # used only by hidden tests, solutions, wrong/ or starters (already in lab.py)
        kept = [ln for ln in lines if not ln.startswith("#: ")]
        if any(ln.startswith("#,") and "fuzzy" in ln for ln in kept):
            kept = _blank_strings(kept)  # a fuzzy string is a guess copied from another entry: maybe a hidden one
        at = next((i for i, ln in enumerate(kept) if not ln.startswith("#")), len(kept))
        kept[at:at] = [f"#: {f}" for f in sorted(set(public))]
        out.append("\n".join(kept))
    return "\n\n".join(out) + "\n"


def strip_catalogs(ed: Edition) -> None:
    for po in sorted(ed.out.glob("src/redis_course/l10n/locale/*/LC_MESSAGES/*.po")):
        po.write_text(strip_catalog(po.read_text(encoding="utf-8")), encoding="utf-8")


def student_files(ed: Edition) -> None:
    write_student_files(ed.out, discover(ed.out / "labs"), first_lang=ed.lang, lang=ed.lang)


STEPS: list[Callable[[Edition], None]] = [copy_files, write_labs, strip_catalogs, student_files]


def release(out: Path, *, force: bool = False, root: Path | None = None, lang: str = "en") -> Path:
    """Write the student edition of the repository at ``root`` (default: this one) to ``out``, its
    labs' docstrings and its README first in ``lang``; ``check`` there speaks ``lang`` by default."""
    ed = Edition(root=(root or paths.ROOT).resolve(), out=Path(out).resolve(), force=force, lang=lang)
    prepare(ed)
    for step in STEPS:
        step(ed)
    return ed.out
