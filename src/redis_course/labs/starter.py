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
        found.extend(s for s in (line.strip() for line in lines[start + 1:end]) if s and not s.startswith("#"))
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
