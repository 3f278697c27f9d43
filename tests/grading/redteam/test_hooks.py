"""Finding: fault-injection hooks lived in the student's module.

A lab 03 submission that defined its own ``arm_crash`` / ``set_machine_timezone`` and a lab 05
submission that raised its own ``SimulatedCrash`` early got full marks.  Faults and time zones are
now set by the grader's side of the student's process: these submissions must lose exactly the
tests that their code deserves to lose, and honest solutions keep full marks.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from redis_course.labs.authoring.model import find_lab
from redis_course.labs.engine.runner import run_lab
from redis_course.labs.authoring.wrong import Wrong

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "hooks"
CRASH_05 = [
    "test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice[claimed]",
    "test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice[applied]",
    "test_crash_after_crash_then_flushes_hidden",
]


def _submissions(tmp: Path) -> dict[str, tuple[str, Path, list[str]]]:
    """name -> (lab, file, tests the code deserves to fail)."""
    getdel = Wrong(find_lab("05"), find_lab("05").path / "wrong" / "flush_getdel.py").source()
    out = {
        "lab03_own_hooks": (
            "03",
            HERE / "lab03_own_hooks.py",
            [
                "test_day_boundary_is_utc_whatever_the_machine_zone_hidden",
                "test_a_crash_between_commands_leaves_no_key_without_ttl_hidden",
            ],
        )
    }
    for name in ("lab05_own_crash", "lab05_early_crash_point"):
        path = tmp / f"{name}.py"
        path.write_text(getdel + (HERE / f"{name}.txt").read_text(encoding="utf-8"), encoding="utf-8")
        out[name] = ("05", path, CRASH_05)
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = _submissions(tmp_path_factory.mktemp("hooks"))

    def one(item):
        name, (lab_id, path, _) = item
        return name, run_lab(find_lab(lab_id), path, visibility=("public", "hidden"), backend="redis-server")

    with ThreadPoolExecutor(2) as pool:
        return subs, dict(pool.map(one, subs.items()))


@pytest.mark.parametrize("name", ["lab03_own_hooks", "lab05_own_crash", "lab05_early_crash_point"])
def test_hooks_defined_by_the_module_change_nothing(graded, name):
    subs, results = graded
    res = results[name]
    assert res.status == "ok", res.message
    failed = {t.name for t in res.tests if not t.passed}
    deserved = subs[name][2]
    assert set(deserved) <= failed, f"{name} passed {sorted(set(deserved) - failed)} with its own hooks"
    lost = sum(t.max_points for t in res.tests if t.name in deserved)
    assert res.points <= res.max_points - lost, f"{name} scored {res.points:g}/{res.max_points:g}"
