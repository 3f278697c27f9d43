"""Where the test suite's time goes: a JUnit XML file (``pytest --junitxml``) summed per directory.

    .venv/bin/course test --junitxml=/tmp/suite.xml
    .venv/bin/python bench/suite_times.py /tmp/suite.xml [--before /tmp/old.xml] [--depth 2] [--modules]

Each row is a folder of tests (``tests/grading``, ``tests/grading/redteam`` ...) with its number of tests
and the sum of their durations (set-up, call and tear-down; a module fixture counts in the first test
that asks for it).  With two xdist workers the sums add up to about twice the wall time.  ``--before``
adds the same columns from an earlier run.  Prints a Markdown table; asserts nothing: the numbers
depend on the machine and its load, so report them with ``cat /proc/loadavg``.

    .venv/bin/python bench/suite_times.py /tmp/suite.xml --write-durations tests/durations.json

writes each test's duration (those of half a second or more) where the test run's scheduler reads
them (tests/conftest.py): the longest xdist groups start first, so that no long group is left for
the end while the other worker idles.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import defaultdict


def per_folder(path: str, depth: int, modules: bool = False) -> dict[str, tuple[int, float]]:
    """folder (or test module) → (tests, seconds) from one JUnit XML file."""
    out: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for case in ET.parse(path).getroot().iter("testcase"):
        parts = [p for p in case.get("classname", "").split(".") if not p[:1].isupper()]  # no class names
        parts = parts if parts[:1] == ["tests"] else ["tests", *parts]
        folder = "/".join(parts if modules else parts[:-1][:depth])
        row = out[folder]
        row[0] += 1
        row[1] += float(case.get("time") or 0)
    return {k: (v[0], v[1]) for k, v in out.items()}


def nodeid(case: ET.Element) -> str:
    """The pytest node id of a JUnit test case (``tests.grading.test_x.Class`` + name)."""
    parts = case.get("classname", "").split(".")
    n = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts))
    return "::".join(["/".join(parts[:n]) + ".py", *parts[n:], case.get("name", "")])


def durations(path: str, least: float = 0.5) -> dict[str, float]:
    """node id → seconds, for the tests of one JUnit XML file that took ``least`` seconds or more."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        t = float(case.get("time") or 0)
        if t >= least:
            out[nodeid(case)] = round(t, 1)
    return dict(sorted(out.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("xml")
    ap.add_argument("--before")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--modules", action="store_true", help="one row per test module")
    ap.add_argument("--write-durations", metavar="JSON", help="write each test's duration there, and nothing else")
    a = ap.parse_args()
    if a.write_durations:
        import json

        with open(a.write_durations, "w", encoding="utf-8") as f:
            json.dump(durations(a.xml), f, indent=0, ensure_ascii=False)
            f.write("\n")
        return
    now = per_folder(a.xml, a.depth, a.modules)
    old = per_folder(a.before, a.depth, a.modules) if a.before else {}
    head = "| folder | tests | s |" + (" tests before | s before |" if old else "")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for folder in sorted(set(now) | set(old), key=lambda f: -now.get(f, (0, 0))[1]):
        n, s = now.get(folder, (0, 0.0))
        row = f"| {folder} | {n} | {s:.0f} |"
        if old:
            on, os_ = old.get(folder, (0, 0.0))
            row += f" {on} | {os_:.0f} |"
        print(row)
    tn, ts = sum(v[0] for v in now.values()), sum(v[1] for v in now.values())
    print(
        f"| total | {tn} | {ts:.0f} |"
        + (f" {sum(v[0] for v in old.values())} | {sum(v[1] for v in old.values()):.0f} |" if old else "")
    )


if __name__ == "__main__":
    main()
