#!/usr/bin/env python3
"""Mutation testing of the labs' tests: how many small changes to a lab's ``solution.py`` its tests notice.

    .venv/bin/python bench/mutation_bench.py [--labs 01 04] [--backend fakeredis redis-server]
                                             [--sample 40] [--seed 1] [--workers 2] [--show-survivors]

Mutants come from **cosmic-ray**'s operators (a maintained mutation tool; installed on first use into
``~/.cache/redis-course/tools/cosmic-ray``, pinned, outside the course's locked environment because
nothing else needs it), a chosen subset that produces plausible student mistakes (comparisons off by
one, ``and``/``or``, ``not`` added or dropped, ``True``/``False``, numbers, ``+``/``-``, loops that never
run, a removed decorator, an exception type replaced), plus the course's own **Redis operators** that
change a command inside a Lua script or a call (``PX``→``EX``, ``NX``→``XX``, ``INCRBY``→``INCR``,
``transaction=True``→``False``, ``ZADD ... NX`` dropped).  Only the code between ``# BEGIN SOLUTION``
and ``# END SOLUTION`` is mutated: what the student writes.

Each mutant is graded exactly as a student would be (``run_lab``: public and hidden tests, sandboxed
child, private Redis) on each backend; it is *killed* when it scores less than full marks.  Mutants
listed in ``bench/mutation_equivalent.txt`` (lab, backend-independent diff line, one line why) are
equivalent: no test could tell them apart, and they are left out of the score.

Prints per lab and backend: mutants, killed, survived, equivalent, the kill ratio (target ≥ 95 %), and
with ``--show-survivors`` each survivor's diff.  A mutant's run stops at its first failing test, so a
killed mutant costs a few seconds and a survivor a whole grading run (5-15 s): every lab on both
backends is about 45 minutes on two busy cores; ``--sample N`` grades N mutants per lab drawn with
``--seed``.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from redis_course.labs.authoring.model import discover  # noqa: E402
from redis_course.labs.engine.runner import run_lab  # noqa: E402

COSMIC_RAY = "cosmic-ray==8.7.0"
TOOLS = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "redis-course" / "tools" / "cosmic-ray"
OPERATORS = [
    "core/ReplaceComparisonOperator_Eq_NotEq",
    "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Lt_LtE",
    "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE",
    "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Is_IsNot",
    "core/ReplaceComparisonOperator_IsNot_Is",
    "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd",
    "core/AddNot",
    "core/ReplaceUnaryOperator_Delete_Not",
    "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue",
    "core/NumberReplacer",
    "core/ReplaceBinaryOperator_Add_Sub",
    "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceBinaryOperator_Mul_FloorDiv",
    "core/ReplaceBinaryOperator_FloorDiv_Mul",
    "core/ZeroIterationForLoop",
    "core/RemoveDecorator",
    "core/ReplaceBreakWithContinue",
]
# (name, pattern, replacement): one occurrence at a time, inside the solution's own code
REDIS_OPERATORS = [
    ("px-to-ex", r"(?<=['\"])PX(?=['\"])", "EX"),
    ("pexpire-to-expire", r"PEXPIRE(?!AT)", "EXPIRE"),
    ("nx-to-xx", r"(?<=['\"])NX(?=['\"])", "XX"),
    ("incrby-to-incr", r"INCRBY(?!FLOAT)", "INCR"),
    ("transaction-off", r"transaction=True", "transaction=False"),
    ("zadd-nx-dropped", r"'ZADD', KEYS\[\d\], 'NX',", "'ZADD', KEYS[1],"),
    ("time-from-client", r"redis\.call\('TIME'\)", "{ARGV[#ARGV], 0}"),
    ("gt-to-ge", r"(?<![<>=~]) > (?!=)", " >= "),
    ("lt-to-le", r"(?<![<>=~]) < (?!=)", " <= "),
    ("le-to-lt", r" <= ", " < "),
    ("ge-to-gt", r" >= ", " > "),
    ("plus-to-minus", r" \+ 1\b", " - 1"),
]
MARK = re.compile(r"^\s*# (BEGIN|END) SOLUTION\s*$")


def cosmic_ray():
    """Import cosmic-ray, installing the pinned version into the tool cache on first use."""
    if str(TOOLS) not in sys.path:
        sys.path.append(str(TOOLS))  # after the course's own packages: never shadow what the labs use
    try:
        import parso.tree  # noqa: F401 - cosmic-ray's operator plugins import parso in an order that needs this

        return importlib.import_module("cosmic_ray.plugins"), importlib.import_module("cosmic_ray.mutating")
    except ImportError:
        print(f"installing {COSMIC_RAY} into {TOOLS} (once)", file=sys.stderr)
        uv = shutil.which("uv") or next((str(p) for p in [ROOT / ".venv" / ".uv" / "bin" / "uv"] if p.exists()), None)
        cmd = (
            [uv, "pip", "install", "--quiet", "--python", sys.executable]
            if uv
            else [sys.executable, "-m", "pip", "install", "--quiet"]
        )
        subprocess.run([*cmd, "--target", str(TOOLS), COSMIC_RAY], check=True)
        importlib.invalidate_caches()
        import parso.tree  # noqa: F401,F811

        return importlib.import_module("cosmic_ray.plugins"), importlib.import_module("cosmic_ray.mutating")


@dataclass
class Mutant:
    lab: str
    operator: str
    code: str
    diff: str


def solution_lines(text: str) -> set[int]:
    """1-based line numbers inside BEGIN/END SOLUTION regions."""
    inside, out = False, set()
    for n, line in enumerate(text.splitlines(), 1):
        m = MARK.match(line)
        if m:
            inside = m.group(1) == "BEGIN"
        elif inside:
            out.add(n)
    return out


def _diff(a: str, b: str) -> str:
    return "".join(
        line
        for line in difflib.unified_diff(a.splitlines(True), b.splitlines(True), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def _in_comment(text: str, pos: int) -> bool:
    """Whether ``pos`` is after a Lua (``--``) or Python (`` # ``) comment marker on its line: a
    change there is no mutant.  Lua's length operator (``#limits``) is not a comment; a marker
    inside a string literal counts as one (rough, erring on the side of fewer mutants)."""
    line_start = text.rfind("\n", 0, pos) + 1
    before = text[line_start:pos]
    return "--" in before or re.search(r"(^|\s)#(\s|$)", before) is not None


def mutants(lab) -> list[Mutant]:
    """Every mutant of the solution's own code: cosmic-ray's operators, then the Redis operators."""
    plugins, mutating = cosmic_ray()
    text = lab.solution_file.read_text(encoding="utf-8")
    allowed = solution_lines(text)
    found = []
    for name in OPERATORS:
        op = plugins.get_operator(name)()
        for occurrence in range(500):
            code = mutating.mutate_code(text, op, occurrence)
            if code is None:
                break
            changed = [i for i, (a, b) in enumerate(zip(text.splitlines(), code.splitlines()), 1) if a != b]
            if changed and changed[0] in allowed and code != text:
                found.append(Mutant(lab.id, name.split("/")[1], code, _diff(text, code)))
    for name, pattern, repl in REDIS_OPERATORS:
        for m in re.finditer(pattern, text):
            if text.count("\n", 0, m.start()) + 1 in allowed and not _in_comment(text, m.start()):
                code = text[: m.start()] + re.sub(pattern, repl, m.group(0)) + text[m.end() :]
                found.append(Mutant(lab.id, f"redis/{name}", code, _diff(text, code)))
    unique = {m.code: m for m in found}  # a Redis operator may repeat a cosmic-ray mutant of Python code
    return list(unique.values())


def equivalent() -> dict[tuple[str, str], str]:
    """(lab, '-old +new' diff text) -> why the mutant cannot be told apart."""
    path = Path(__file__).with_name("mutation_equivalent.txt")
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        if line.strip() and not line.startswith("#"):
            lab, diff, why = line.split(" | ", 2)
            out[(lab.strip(), diff.strip())] = why.strip()
    return out


def killed(lab, mutant: Mutant, backend: str, workdir: Path) -> bool:
    path = workdir / f"{mutant.lab}-{abs(hash(mutant.code))}.py"
    path.write_text(mutant.code, encoding="utf-8")
    res = run_lab(
        lab, path, visibility=("public", "hidden"), backend=backend, first_failure=True
    )  # killed at its first failing test: the rest cannot revive it
    return res.status != "ok" or res.points < res.max_points


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labs", nargs="*", default=None, help="lab numbers (default: every lab)")
    ap.add_argument("--backend", nargs="*", default=["fakeredis", "redis-server"])
    ap.add_argument("--sample", type=int, default=0, help="grade at most N mutants per lab (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--show-survivors", action="store_true")
    args = ap.parse_args()
    labs = [
        lab for lab in discover() if lab.solution_file.exists() and (not args.labs or lab.id.split("-")[0] in args.labs)
    ]
    same = equivalent()
    rows, survivors = [], []
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        for lab in labs:
            every = mutants(lab)
            chosen = random.Random(args.seed).sample(every, min(args.sample, len(every))) if args.sample else every
            eq = [m for m in chosen if (lab.id, " ".join(m.diff.split())) in same]
            todo = [m for m in chosen if m not in eq]
            for backend in args.backend:

                def grade(m, backend=backend):
                    return killed(lab, m, backend, Path(tmp))

                with ThreadPoolExecutor(max_workers=args.workers) as pool:
                    dead = list(pool.map(grade, todo))
                alive = [m for m, d in zip(todo, dead) if not d]
                survivors += [(lab.id, backend, m) for m in alive]
                ratio = (len(todo) - len(alive)) / len(todo) if todo else 1.0
                rows.append(
                    (lab.id, backend, len(every), len(chosen), len(eq), len(todo) - len(alive), len(alive), ratio)
                )
                print(
                    f"  {lab.id} on {backend}: {len(todo) - len(alive)}/{len(todo)} killed", file=sys.stderr, flush=True
                )
    print(
        f"\n{'lab':<18} {'backend':<13} {'mutants':>7} {'graded':>6} {'equiv':>5} {'killed':>6} {'survived':>8} {'killed %':>8}"
    )
    for lab_id, backend, n, graded, eq, k, s, ratio in rows:
        print(f"{lab_id:<18} {backend:<13} {n:>7} {graded:>6} {eq:>5} {k:>6} {s:>8} {ratio:>8.1%}")
    print(
        "target: >= 95 % of non-equivalent mutants killed in every lab on both backends "
        f"(baseline: the same tests on the unmutated solution, 100 % full marks){' (sampled)' if args.sample else ''}"
    )
    if args.show_survivors:
        for lab_id, backend, m in survivors:
            print(f"\n--- survivor {lab_id} on {backend} ({m.operator})\n{m.diff}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
