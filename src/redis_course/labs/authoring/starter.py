"""Starter code, generated from the solution.

In ``solution.py`` the code students must write sits between marker lines::

    def count_hit(r, user_id: int) -> int:
        \"\"\"...\"\"\"
        # BEGIN SOLUTION
        return r.incr(r.key("hits", user_id))
        # END SOLUTION

In ``starter.py`` each region becomes ``raise NotImplementedError("count_hit: your code here")`` at
the marker's indentation; everything else is copied as it is.  ``course labs sync`` writes the
starters; ``course labs sync --check`` (and a test) fails when one is stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .model import Lab, discover

BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^[ \t]*# END SOLUTION\s*$")
DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async\s+)?def\s+(?P<name>\w+)\s*\(")


class MarkerError(ValueError):
    """Unbalanced or misplaced solution markers."""


def _regions(lines: list[str], where: str) -> list[tuple[int, int]]:
    regions, start = [], None
    for i, line in enumerate(lines):
        if BEGIN.match(line):
            if start is not None:
                raise MarkerError(f"{where}:{i + 1}: BEGIN SOLUTION inside another region (line {start + 1})")
            start = i
        elif END.match(line):
            if start is None:
                raise MarkerError(f"{where}:{i + 1}: END SOLUTION without BEGIN SOLUTION")
            regions.append((start, i))
            start = None
        elif "BEGIN SOLUTION" in line or "END SOLUTION" in line:
            raise MarkerError(f"{where}:{i + 1}: write the marker alone on its line: '# BEGIN SOLUTION'")
    if start is not None:
        raise MarkerError(f"{where}:{start + 1}: BEGIN SOLUTION without END SOLUTION")
    return regions


def _enclosing_function(lines: list[str], index: int, indent: str) -> str:
    for line in reversed(lines[:index]):
        m = DEF.match(line)
        if m and len(m.group("indent")) < len(indent):
            return m.group("name")
    return "this part"


def make_starter(solution_text: str, where: str = "solution.py") -> str:
    """The starter for ``solution_text``: each solution region replaced by NotImplementedError."""
    lines = solution_text.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    for start, end in _regions(lines, where):
        out.extend(lines[pos:start])
        indent = BEGIN.match(lines[start]).group("indent")  # type: ignore[union-attr]
        name = _enclosing_function(lines, start, indent)
        out.append(f'{indent}raise NotImplementedError("{name}: your code here")\n')
        pos = end + 1
    out.extend(lines[pos:])
    return "".join(out)


def solution_lines(solution_text: str, where: str = "solution.py") -> list[str]:
    """The lines inside the solution regions (stripped, non-empty): what must never reach students."""
    lines = solution_text.splitlines()
    found = []
    for start, end in _regions(lines, where):
        found.extend(s for s in (line.strip() for line in lines[start + 1 : end]) if s and not s.startswith("#"))
    return found


def stale_starters(labs: list[Lab] | None = None) -> list[Path]:
    """Starters that differ from what their solution generates (or are missing)."""
    stale = []
    for lab in discover() if labs is None else labs:
        if not lab.solution_file.exists():
            continue
        want = make_starter(lab.solution_file.read_text(encoding="utf-8"), str(lab.solution_file))
        if not lab.starter_file.exists() or lab.starter_file.read_text(encoding="utf-8") != want:
            stale.append(lab.starter_file)
    return stale


def sync(labs: list[Lab] | None = None, check: bool = False) -> list[Path]:
    """Write every stale starter (or, with ``check``, only list them)."""
    stale = stale_starters(labs)
    if not check:
        for path in stale:
            solution = path.with_name("solution.py")
            path.write_text(make_starter(solution.read_text(encoding="utf-8"), str(solution)), encoding="utf-8")
    return stale


# -------------------------------------------------------------- the starter's docstrings, translated
STARTER_CONTEXT = "starter"


@dataclass(frozen=True)
class Docstring:
    """A docstring of a starter: its cleaned text (the catalog's message) and where its literal is."""

    text: str
    lineno: int
    col: int
    end_lineno: int
    end_col: int
    indent: str


def docstrings(source: str) -> list[Docstring]:
    """The module's, each function's and each class's docstring, in source order."""
    import ast
    import inspect

    tree = ast.parse(source)
    lines = source.splitlines()
    out = []
    for node in [tree, *ast.walk(tree)]:
        if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        body = node.body
        if not (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            continue
        c = body[0].value
        line = lines[c.lineno - 1]
        out.append(
            Docstring(
                inspect.cleandoc(c.value),
                c.lineno,
                c.col_offset,
                c.end_lineno,
                c.end_col_offset,
                line[: len(line) - len(line.lstrip())],
            )
        )
    return sorted(set(out), key=lambda d: (d.lineno, d.col))


def _literal(text: str, indent: str) -> str:
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{body}"""'
    rest = "\n".join(indent + ln if ln.strip() else "" for ln in lines[1:])
    return f'"""{lines[0]}\n{rest}\n{indent}"""'


PLACEHOLDER = "{name}: your code here"
_PLACEHOLDER = re.compile(r'NotImplementedError\("(?P<name>\w+|this part): your code here"\)')


@dataclass(frozen=True)
class Comment:
    """A comment of a starter: its text (the catalog's message; consecutive full-line comments with the
    same marker and indentation are one message, their lines joined by ``\\n``) and where it is."""

    text: str
    lineno: int
    end_lineno: int
    col: int
    marker: str  # "# " or "#: " (a Sphinx attribute comment)


def comments(source: str) -> list[Comment]:
    """The comments of ``source``, in order; a run of full-line comments is one :class:`Comment`."""
    import io
    import tokenize

    lines = source.splitlines()
    found: list[Comment] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        row, col = tok.start
        marker = "#: " if tok.string.startswith("#:") else "# "
        text = tok.string[len(marker.rstrip()) :].strip()
        if not text:
            continue
        full_line = not lines[row - 1][:col].strip()
        prev = found[-1] if found else None
        if (
            full_line
            and prev
            and prev.end_lineno == row - 1
            and prev.col == col
            and prev.marker == marker
            and not lines[prev.lineno - 1][: prev.col].strip()
        ):
            found[-1] = Comment(prev.text + "\n" + text, prev.lineno, row, col, marker)
        else:
            found.append(Comment(text, row, row, col, marker))
    return found


def translate_docstrings(source: str, lang: str) -> str:
    """``source`` with every docstring, comment and ``your code here`` in ``lang`` where the catalog has
    them (context ``starter``); the code is untouched, so the starter works the same in every language."""
    from ...l10n import pgettext

    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, list[str]]] = []
    for d in docstrings(source):
        text = pgettext(STARTER_CONTEXT, d.text, lang=lang)
        if text != d.text:
            head = lines[d.lineno - 1][: d.col]
            tail = lines[d.end_lineno - 1][d.end_col :]
            edits.append((d.lineno, d.end_lineno, [head + _literal(text, d.indent) + tail]))
    for c in comments(source):
        text = pgettext(STARTER_CONTEXT, c.text, lang=lang)
        if text == c.text:
            continue
        head = lines[c.lineno - 1][: c.col]
        if c.lineno == c.end_lineno and head.strip():  # after code: one line
            edits.append((c.lineno, c.lineno, [head + c.marker + " ".join(text.split("\n")) + "\n"]))
        else:
            edits.append((c.lineno, c.end_lineno, [head + c.marker + ln + "\n" for ln in text.split("\n")]))
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1 : end] = new
    out = "".join(lines)
    return _PLACEHOLDER.sub(
        lambda m: (
            'NotImplementedError("'
            + pgettext(STARTER_CONTEXT, PLACEHOLDER, lang=lang, name=m.group("name")).replace('"', "'")
            + '")'
        ),
        out,
    )
