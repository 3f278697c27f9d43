"""Your lab files: each ``labs/NN-topic/lab.py`` is Python that still defines every function its lab
asks for, and each lab has the tests that ``check`` runs.

These checks do not run your code and give no points: ``python3 run.py check NN`` does that.  They
pass on untouched lab files and fail when a file no longer loads or a function was renamed or removed.
"""

from __future__ import annotations

import ast

import pytest

from redis_course.l10n import _
from redis_course.labs.authoring.model import discover

LABS = discover()


def defined_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def test_there_are_labs():
    assert LABS, _("No lab was found under labs/.")


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_lab_file_is_python_and_defines_what_the_lab_asks_for(lab):
    file = lab.student_file
    assert file.is_file(), _("{file} is missing: the lab's tests need it.", file=file)
    try:
        tree = ast.parse(file.read_bytes(), str(file))
    except SyntaxError as exc:
        pytest.fail(
            _("{file} is not valid Python (line {line}): {error}.", file=file, line=exc.lineno, error=exc.msg),
            pytrace=False,
        )
    missing = [name for name in lab.functions if name not in defined_names(tree)]
    assert not missing, _(
        "{file} does not define {names}: the lab's tests call them by these names.", file=file, names=", ".join(missing)
    )


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_lab_has_its_public_tests(lab):
    assert lab.test_files("public"), _("{lab} has no tests in tests/public/.", lab=lab.id)
