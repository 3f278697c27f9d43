"""Known-wrong implementations as differences from the solution: ``labs/NN-topic/wrong/NAME.py``.

A wrong file holds a module docstring (the mistake, in one English line, as a student would make
it) and only the top-level definitions that differ from ``solution.py``::

    \"\"\"reset returns the count but leaves the key in place (GET instead of GETDEL).\"\"\"


    def reset(r, post_id: int) -> int:
        old = r.get(r.key("views", "post", post_id))
        return int(old) if old is not None else 0

:func:`compose` builds the standalone ``lab.py`` the grader loads: the solution's source with each
same-named top-level ``def``/``class``/assignment replaced by the wrong file's (in place), new
definitions inserted in the wrong file's order, and the wrong file's imports added after the
solution's.  The text is spliced (comments and layout of the untouched parts are kept), not
regenerated, so a traceback's line numbers point at readable code.

A mistake of one line inside a long definition (a Lua script's ``PX`` where ``EX`` belongs) is an
edit instead of a copy of the definition: ``EDITS = [(old, new), ...]``, string literals, where each
``old`` occurs exactly once in ``solution.py`` and is replaced by ``new`` before the definitions are
spliced (a solution that no longer holds ``old`` makes the wrong file an error, not a silent no-op)::

    \"\"\"The sliding log's TTL is set in whole seconds (EXPIRE), cutting a 1,500 ms window to 1 s.\"\"\"

    EDITS = [("redis.call('PEXPIRE', KEYS[1], longest + slack)",
              "redis.call('EXPIRE', KEYS[1], math.floor((longest + slack) / 1000))")]
A line ``Caught by: test_name[, test_name]`` in the docstring names the tests written for the
mistake; the known-wrong matrix runs them first (``tests/grading/test_all_labs.py`` says which
test catches a file that has no such line, or whose named test no longer fails).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .model import Lab, LabError

ALLOWED = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


class WrongFileError(LabError):
    """A wrong/ file is not a docstring followed by imports and top-level definitions."""


CAUGHT_BY = "Caught by:"  # a docstring line naming the tests written for the mistake
EDITS = "EDITS"  # the name of a wrong file's text edits: [(old, new), ...]


def edits_of(nodes: list[ast.stmt], where: str) -> list[tuple[str, str]]:
    """The ``EDITS = [(old, new), ...]`` pairs among a wrong file's statements (empty without one)."""
    out: list[tuple[str, str]] = []
    for node in nodes:
        if names_of(node) == (EDITS,):
            try:
                pairs = ast.literal_eval(node.value)  # type: ignore[attr-defined]
            except ValueError:
                pairs = None
            if not (
                isinstance(pairs, list)
                and pairs
                and all(
                    isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p) and p[0] != p[1]
                    for p in pairs
                )
            ):
                raise WrongFileError(
                    f"{where}:{node.lineno}: {EDITS} must be a list of (old, new) pairs of "
                    "string literals, old and new different"
                )
            out.extend(pairs)
    return out


def apply_edits(solution: str, edits: list[tuple[str, str]], where: str) -> str:
    """``solution`` with each ``old`` (found exactly once) replaced by its ``new``, in order."""
    for old, new in edits:
        count = solution.count(old)
        if count != 1:
            raise WrongFileError(
                f"{where}: {EDITS} text {old[:60]!r} is in solution.py "
                f"{'nowhere' if not count else f'{count} times'}: it must be there exactly once"
            )
        solution = solution.replace(old, new)
    return solution


@dataclass(frozen=True)
class Wrong:
    """One known-wrong implementation of a lab."""

    lab: Lab
    path: Path

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def mistake(self) -> str:
        """The docstring's first line: what the implementation gets wrong."""
        doc = ast.get_docstring(_parse(self.path.read_text(encoding="utf-8"), _where(self.path))) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @property
    def caught_by(self) -> tuple[str, ...]:
        """The tests named on the docstring's ``Caught by:`` line (function names, comma-separated):
        the ones written for this mistake.  The known-wrong matrix runs them first, so that a run
        that stops at its first failure is one test long."""
        doc = ast.get_docstring(_parse(self.path.read_text(encoding="utf-8"), _where(self.path))) or ""
        for line in doc.splitlines():
            if line.strip().lower().startswith(CAUGHT_BY.lower()):
                return tuple(n.strip() for n in line.strip()[len(CAUGHT_BY) :].split(",") if n.strip())
        return ()

    def source(self) -> str:
        """The composed, standalone lab.py."""
        return compose(
            self.lab.solution_file.read_text(encoding="utf-8"),
            self.path.read_text(encoding="utf-8"),
            where=_where(self.path),
            name=f"wrong/{self.path.name}",
        )

    def write(self, directory: Path) -> Path:
        """Write the composed lab.py to ``directory/<lab>/wrong-<NAME>.py`` and return its path."""
        out = Path(directory) / self.lab.id / f"wrong-{self.path.name}"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(self.source(), encoding="utf-8")
        return out


def wrongs(lab: Lab) -> list[Wrong]:
    return [Wrong(lab, p) for p in lab.wrong_files]


def _where(path: Path) -> str:
    parts = Path(path).parts
    return "/".join(parts[-3:]) if len(parts) >= 3 else str(path)


def _parse(text: str, where: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise WrongFileError(f"{where}:{exc.lineno}: {exc.msg}") from None


def names_of(node: ast.stmt) -> tuple[str, ...]:
    """The top-level names a definition binds (empty for imports and anything else)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, ast.Assign):
        out: list[str] = []
        for target in node.targets:
            elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            out.extend(e.id for e in elts if isinstance(e, ast.Name))
        return tuple(out)
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return (node.target.id,)
    return ()


def _span(node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) line span of a top-level statement, decorators included."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start - 1, node.end_lineno


def _segment(lines: list[str], node: ast.stmt) -> str:
    a, b = _span(node)
    return "".join(lines[a:b]).rstrip("\n") + "\n"


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def override_nodes(text: str, where: str) -> tuple[str, list[ast.stmt]]:
    """(docstring, statements) of a wrong file; raises :class:`WrongFileError` on anything else."""
    tree = _parse(text, where)
    body = list(tree.body)
    if not body or not _is_docstring(body[0]) or not body[0].value.value.strip():
        raise WrongFileError(f"{where}: start with a docstring that says the mistake in one line")
    doc = body.pop(0).value.value
    for node in body:
        if not isinstance(node, ALLOWED) or (isinstance(node, (ast.Assign, ast.AnnAssign)) and not names_of(node)):
            raise WrongFileError(
                f"{where}:{node.lineno}: only imports and top-level def, class and NAME = ... belong in a wrong/ file"
            )
    if not any(names_of(n) for n in body):
        raise WrongFileError(f"{where}: defines nothing; put the definitions that differ from solution.py here")
    return doc, body


def compose(solution: str, override: str, *, where: str = "wrong file", name: str = "") -> str:
    """The solution's source with the override's definitions and imports spliced in."""
    doc, nodes = override_nodes(override, where)
    solution = apply_edits(solution, edits_of(nodes, where), where)
    nodes = [n for n in nodes if names_of(n) != (EDITS,)]
    sol = _parse(solution, "solution.py")
    sol_lines = solution.splitlines(keepends=True)
    if sol_lines and not sol_lines[-1].endswith("\n"):
        sol_lines[-1] += "\n"
    plan = _Splice.of(sol, nodes, override.splitlines(keepends=True))
    mistake = doc.strip().splitlines()[0]
    return f"# Composed from solution.py and {name or where}: {mistake}\n" + plan.apply(sol, sol_lines)


@dataclass
class _Splice:
    """Where an override's statements go in the solution (by top-level statement index)."""

    replace: dict[int, str] = field(default_factory=dict)  # statement -> new text
    drop: set[int] = field(default_factory=set)  # statements superseded by an override
    before: dict[int, list[str]] = field(default_factory=dict)  # new definitions before a statement
    tail: list[str] = field(default_factory=list)  # new definitions after everything
    future: list[str] = field(default_factory=list)  # new ``from __future__`` imports
    imports: list[str] = field(default_factory=list)  # other new imports

    @classmethod
    def of(cls, sol: ast.Module, nodes: list[ast.stmt], o_lines: list[str]) -> "_Splice":
        defined: dict[str, list[int]] = {}  # where each solution name is defined
        for i, node in enumerate(sol.body):
            for n in names_of(node):
                defined.setdefault(n, []).append(i)
        plan, pending = cls(), []
        have = {ast.dump(n) for n in sol.body if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in nodes:
            text = _segment(o_lines, node)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if ast.dump(node) not in have:
                    (plan.future if text.startswith("from __future__") else plan.imports).append(text)
                continue
            hits = sorted({i for n in names_of(node) for i in defined.get(n, [])})
            if not hits:
                pending.append(text)
                continue
            first = hits[0]  # two overrides for one solution statement: keep both, in order
            plan.replace[first] = plan.replace[first] + "\n\n" + text if first in plan.replace else text
            plan.drop.update(hits[1:])
            if pending:
                plan.before.setdefault(first, []).extend(pending)
                pending = []
        plan.tail.extend(pending)
        return plan

    def apply(self, sol: ast.Module, sol_lines: list[str]) -> str:
        """The solution's lines with the splice made; imports after the solution's last top-level
        import (or its docstring), ``__future__`` first."""
        last_import = max(
            (i for i, n in enumerate(sol.body) if isinstance(n, (ast.Import, ast.ImportFrom))), default=None
        )
        future_at = 0 if sol.body and _is_docstring(sol.body[0]) else -1
        import_at = last_import if last_import is not None else future_at
        out: list[str] = []
        if import_at == -1:
            out.extend(self.future + self.imports)
            if self.future or self.imports:
                out.append("\n")
        pos = 0
        for i, node in enumerate(sol.body):
            a, b = _span(node)
            while b < len(sol_lines) and sol_lines[b][:1] in " \t" and sol_lines[b].strip().startswith("#"):
                b += 1  # an indented comment after the last statement (``# END SOLUTION``) belongs to it
            out.extend(sol_lines[pos:a])  # comments and blank lines between statements
            out.extend(extra + "\n\n" for extra in self.before.get(i, []))
            if i in self.replace:
                out.append(self.replace[i])
            elif i not in self.drop:
                out.extend(sol_lines[a:b])
            pos = b
            if i == future_at and self.future:
                out.extend(self.future)
            if i == import_at and self.imports:
                if i == future_at and not self.future:
                    out.append("\n")
                out.extend(self.imports)
        out.extend(sol_lines[pos:])
        out.extend("\n\n" + extra for extra in self.tail)
        return "".join(out)


def normalized(node: ast.AST) -> str:
    """A definition's AST without docstrings, annotations and positions: equal means same behaviour."""
    node = ast.parse(ast.unparse(node)).body[0]  # a copy
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if n.body and _is_docstring(n.body[0]):
                n.body = n.body[1:] or [ast.Pass()]
            if not isinstance(n, ast.ClassDef):
                n.returns = None
                for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs:
                    a.annotation = None
                for a in (n.args.vararg, n.args.kwarg):
                    if a is not None:
                        a.annotation = None
    return ast.dump(node, annotate_fields=False)


def redundant(lab: Lab, path: Path) -> list[str]:
    """Names a wrong file defines exactly as solution.py does (up to docstrings and annotations)."""
    where = _where(path)
    _, nodes = override_nodes(path.read_text(encoding="utf-8"), where)
    sol = _parse(lab.solution_file.read_text(encoding="utf-8"), "solution.py")
    same = {normalized(n) for n in sol.body if names_of(n)}
    return [names_of(n)[0] for n in nodes if names_of(n) and names_of(n) != (EDITS,) and normalized(n) in same]


_TMP: list[Path] = []


def composed_path(lab: Lab, name: str) -> Path:
    """The composed lab.py of ``wrong/<name>`` (``"reset_keeps_key"`` or ``"reset_keeps_key.py"``),
    written to a private temporary directory removed when the process exits: for harnesses that
    copy a student's file, as they copied the full wrong files."""
    if not _TMP:
        import atexit
        import shutil
        import tempfile

        _TMP.append(Path(tempfile.mkdtemp(prefix="course-wrong-")))
        atexit.register(shutil.rmtree, _TMP[0], True)
    path = lab.path / "wrong" / (name if name.endswith(".py") else f"{name}.py")
    if not path.is_file():
        raise WrongFileError(f"{lab.id}/wrong/{path.name}: no such file")
    return Wrong(lab, path).write(_TMP[0])
