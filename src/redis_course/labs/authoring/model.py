"""A lab on disk: ``labs/NN-topic/``.

Instructor edition::

    lab.yml          title {en, ru, zh}, functions [..], timeout_s (10), budget_s (90), needs_real_redis (false),
                     redis (single | cluster); checked on load (:mod:`.labconfig`)
    hints.yml        hint-id: {en, ru, zh}
    solution.py      reference code with # BEGIN SOLUTION / # END SOLUTION regions
    starter.py       generated from solution.py (``course labs sync``)
    tests/public/    tests the student sees and runs (``course check``)
    tests/hidden/    tests only the grader runs
    wrong/*.py       known-wrong implementations (each must lose points)

Student edition: ``lab.py`` (the starter, edited by the student), lab.yml, hints.yml, tests/public/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml

from ... import paths
from ...core.backend import CourseError
from ...l10n.messages import LANGS
from . import labconfig

LAB_DIR = re.compile(r"^\d\d-[a-z0-9][a-z0-9-]*$")
VISIBILITIES = ("public", "hidden")


class LabError(CourseError):
    """A lab's files are missing or malformed (one sentence, shown without a traceback)."""


@dataclass(frozen=True)
class Lab:
    path: Path
    meta: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def number(self) -> str:
        return self.id.split("-")[0]

    def title(self, lang: str = "en") -> str:
        t = self.meta.get("title") or {}
        if isinstance(t, str):
            return t
        return t.get(lang) or t.get("en") or self.id

    @property
    def functions(self) -> list[str]:
        return list(self.meta.get("functions") or [])

    @property
    def timeout_s(self) -> float:
        return float(self.meta.get("timeout_s", 10))

    @property
    def budget_s(self) -> float:
        """The wall time all student calls of one grading run may take together (lab.yml ``budget_s``)."""
        return float(self.meta.get("budget_s", 90))

    @property
    def redis_mode(self) -> str:
        """``single`` (default) or ``cluster``: lab.yml ``redis: cluster`` runs the private
        redis-server as a one-node cluster, so CROSSSLOT errors happen as on a real cluster."""
        return str(self.meta.get("redis", "single"))

    @property
    def needs_real_redis(self) -> bool:
        return bool(self.meta.get("needs_real_redis", False))

    @cached_property
    def hints(self) -> dict[str, dict[str, str]]:
        f = self.path / "hints.yml"
        if not f.exists():
            return {}
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise LabError(f"{f}: expected a mapping hint-id -> {{en, ru, zh}}")
        return {str(k): (v if isinstance(v, dict) else {"en": str(v)}) for k, v in data.items()}

    def hint(self, hint_id: str | None, lang: str = "en") -> str:
        if not hint_id:
            return ""
        texts = self.hints.get(hint_id) or {}
        return (texts.get(lang) or texts.get("en") or "").strip()

    # -- files -------------------------------------------------------------------------------
    @property
    def solution_file(self) -> Path:
        return self.path / "solution.py"

    @property
    def starter_file(self) -> Path:
        return self.path / "starter.py"

    @property
    def lab_file(self) -> Path:
        """The student's file in the student edition."""
        return self.path / "lab.py"

    @property
    def student_file(self) -> Path:
        """What ``course check`` runs: lab.py in the student edition, the starter in the instructor repo."""
        return self.lab_file if self.lab_file.exists() else self.starter_file

    @property
    def wrong_files(self) -> list[Path]:
        d = self.path / "wrong"
        return sorted(p for p in d.glob("*.py") if not p.name.startswith("_")) if d.is_dir() else []

    def tests_dir(self, visibility: str) -> Path:
        if visibility not in VISIBILITIES:
            raise ValueError(f"visibility must be one of {VISIBILITIES}")
        return self.path / "tests" / visibility

    def test_files(self, visibility: str) -> list[Path]:
        d = self.tests_dir(visibility)
        return sorted(d.glob("test_*.py")) if d.is_dir() else []

    @cached_property
    def test_docs(self) -> dict[str, str]:
        """Test function name -> its docstring's first line (the English title), from every test file here."""
        out: dict[str, str] = {}
        for visibility in VISIBILITIES:
            for f in self.test_files(visibility):
                for name, doc in test_docstrings(f.read_text(encoding="utf-8")):
                    out[name] = doc
        return out

    def test_title(self, name: str, lang: str = "en") -> str:
        """The title a student reads for test ``name`` (``test_x[case]`` too): its docstring in ``lang``
        (catalog context ``test title``), else the name in words."""
        func, _, case = name.partition("[")
        doc = self.test_docs.get(func)
        if doc:
            from ...l10n import pgettext

            title = pgettext(TITLE_CONTEXT, doc, lang=lang)
        else:
            words = func[5:] if func.startswith("test_") else func
            title = (words[:-7] if words.endswith("_hidden") else words).replace("_", " ")
        return f"{title} [{case[:-1]}]" if case else title


TITLE_CONTEXT = "test title"


def test_docstrings(source: str, *, lines: bool = False) -> list:
    """(name, title) of each ``test_*`` function of a test module, in order: the title is its docstring's
    first paragraph on one line.  ``lines=True``: (name, title, line number of the docstring)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            doc = (ast.get_docstring(node) or "").strip()
            if doc:
                title = " ".join(doc.split("\n\n")[0].split())
                out.append((node.name, title, node.body[0].lineno) if lines else (node.name, title))
    return out


def load_lab(path: Path) -> Lab:
    meta_file = path / "lab.yml"
    if not meta_file.exists():
        raise LabError(f"{path}: no lab.yml")
    try:
        meta = labconfig.load(meta_file)
    except labconfig.LabConfigError as exc:
        raise LabError(str(exc)) from None
    return Lab(path=path.resolve(), meta=meta)


def labs_root() -> Path:
    return paths.LABS


def discover(root: Path | None = None) -> list[Lab]:
    """All labs under ``root`` (default: the repository's labs/), in number order."""
    root = Path(root) if root else labs_root()
    if not root.is_dir():
        return []
    return [
        load_lab(p) for p in sorted(root.iterdir()) if p.is_dir() and LAB_DIR.match(p.name) and (p / "lab.yml").exists()
    ]


def find_lab(spec: str, root: Path | None = None) -> Lab:
    """``"0"``, ``"00"`` or ``"00-demo"`` → that lab."""
    want = spec.strip().rstrip("/").split("/")[-1]
    for lab in discover(root):
        if lab.id == want or (want.isdigit() and lab.number == want.zfill(2)):
            return lab
    from ...l10n import _, pgettext

    known = pgettext("list separator", ", ").join(lab.id for lab in discover(root)) or "—"
    raise LabError(_("There is no lab {spec!r}; the labs are {known}.", spec=spec, known=known))


def check_languages(lab: Lab) -> list[str]:
    """Problems with a lab's translations: a title or hint missing a language."""
    problems = []
    for lang in LANGS:
        if isinstance(lab.meta.get("title"), dict) and not lab.meta["title"].get(lang):
            problems.append(f"{lab.id}/lab.yml: title has no {lang!r}")
        for hid, texts in lab.hints.items():
            if not texts.get(lang):
                problems.append(f"{lab.id}/hints.yml: {hid!r} has no {lang!r}")
    return problems
