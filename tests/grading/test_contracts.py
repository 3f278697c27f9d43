"""Each lab's contract (labs/NN-topic/contract.yml: item id -> one English line) is traced to its
tests: every item is named by at least one test's ``@contract("id", ...)``, every name a test gives
is an item, and every test of the lab names at least one.  Read from the test files' source (no
import, no Redis), so it runs in a second."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from redis_course.labs.authoring.model import discover

LABS = [lab for lab in discover() if lab.solution_file.exists()]
MUST_HAVE_ONE = {
    "01-incr",
    "02-atomicity",
    "03-counters",
    "04-rate-limiting",
    "05-durable",
    "06-cluster",
    "07-production",
}
ITEM_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def contract_items(path: Path) -> dict[str, str]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    assert isinstance(data, dict), f"{path}: expected a mapping of item id -> one English line"
    for key, text in data.items():
        assert isinstance(key, str) and ITEM_ID.fullmatch(key), f"{path}: {key!r} is not an id (lower-case-words)"
        assert isinstance(text, str) and text.strip() and "\n" not in text.strip(), (
            f"{path}: item {key!r} needs one line of English"
        )
    return data


def named_items(test_file: Path) -> dict[str, list[str]]:
    """Test function name -> the ids its ``@contract(...)`` decorators give (an empty list if none)."""
    tree = ast.parse(test_file.read_text(encoding="utf-8"), str(test_file))
    out: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            ids: list[str] = []
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and getattr(deco.func, "id", getattr(deco.func, "attr", "")) == "contract"
                ):
                    for arg in deco.args:
                        assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), (
                            f"{test_file}:{deco.lineno}: contract() takes string literals"
                        )
                        ids.append(arg.value)
            out[node.name] = ids
    return out


def trace(lab) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The lab's items, and for each test (``file::name``) the items it names."""
    items = contract_items(lab.path / "contract.yml")
    tests = {}
    for visibility in ("public", "hidden"):
        for f in lab.test_files(visibility):
            for name, ids in named_items(f).items():
                tests[f"{visibility}/{f.name}::{name}"] = ids
    return items, tests


def problems(items: dict[str, str], tests: dict[str, list[str]]) -> list[str]:
    out = []
    named = {i for ids in tests.values() for i in ids}
    out += [f"contract item {i!r} has no test" for i in items if i not in named]
    out += [f"{t} names {i!r}, which is not in contract.yml" for t, ids in tests.items() for i in ids if i not in items]
    out += [f"{t} names no contract item (add @contract(...))" for t, ids in tests.items() if not ids]
    return out


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.id)
def test_every_contract_item_has_a_test_and_every_test_an_item(lab):
    if not (lab.path / "contract.yml").exists():
        assert lab.id not in MUST_HAVE_ONE, f"{lab.id} has no contract.yml"
        pytest.skip(f"{lab.id} has no contract.yml yet")
    found = problems(*trace(lab))
    assert not found, f"{lab.id}: " + "; ".join(found)


def test_the_check_sees_a_missing_test_and_an_unknown_name():
    items = {"a": "one", "b": "two"}
    assert problems(items, {"t1": ["a", "b"]}) == []
    assert problems(items, {"t1": ["a"]}) == ["contract item 'b' has no test"]
    assert problems(items, {"t1": ["a", "b", "c"]}) == ["t1 names 'c', which is not in contract.yml"]
    assert problems(items, {"t1": ["a", "b"], "t2": []}) == ["t2 names no contract item (add @contract(...))"]


def test_named_items_reads_the_decorators(tmp_path):
    f = tmp_path / "test_x.py"
    f.write_text(
        '@points(1)\n@contract("a", "b")\ndef test_one(lab): pass\n\n'
        '@contract("c")\n@contract("d")\ndef test_two(lab): pass\n\ndef test_three(lab): pass\n'
    )
    assert named_items(f) == {"test_one": ["a", "b"], "test_two": ["c", "d"], "test_three": []}
