"""Every lab under labs/, on both backends (a private redis-server and the fakeredis server):
solution.py scores full marks, starter.py scores 0, every wrong/*.py (composed onto solution.py,
see redis_course.labs.wrong) scores less than full marks, and starter.py is what ``course labs sync``
generates.  New labs are covered as they appear.  Only the runs the selected tests need are made
(``-k 00`` grades lab 00 only)."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from redis_course.labs.model import discover
from redis_course.labs.runner import run_lab
from redis_course.labs.starter import stale_starters
from redis_course.labs.wrong import Wrong, redundant
from redis_course.servers import redis_server_binary

LABS = [lab for lab in discover() if lab.solution_file.exists()]
BACKENDS = ["redis-server", "fakeredis"]


def _graded(lab, *values):
    """A parameter of a test that reads a lab's grading runs: that lab's xdist group (one worker grades it)."""
    return pytest.param(lab, *values, id="-".join([lab.id, *values]), marks=pytest.mark.xdist_group(f"lab-{lab.id}"))


GRADED = [_graded(lab) for lab in LABS]


def _cases(lab, composed_dir):
    yield lab, "solution", lab.solution_file
    yield lab, "starter", lab.starter_file
    for w in lab.wrong_files:
        yield lab, f"wrong/{w.name}", Wrong(lab, w).write(composed_dir)


def _selected(request) -> set[tuple[str, str, str]]:
    """(lab, kind, backend) of the tests this session runs."""
    out = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "lab" in params and "backend" in params:
            kind = params.get("kind") or item.originalname.replace("test_", "").split("_")[0]
            out.add((params["lab"].id, kind, params["backend"]))
    return out


@pytest.fixture(scope="module")
def composed_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("composed")


class Outcomes:
    """The selected (lab, file, backend) runs, graded one lab at a time when a test first asks for that
    lab: all of a lab's runs at once, in parallel (each run is its own processes).  The tests of one lab
    are one xdist group, so each lab is graded by exactly one worker and the labs spread over the workers."""

    def __init__(self, wanted, composed_dir):
        self.wanted, self.composed_dir = wanted, composed_dir
        self.done: dict = {}

    def _run(self, lab, path, backend):
        # a known-wrong file need only lose points: its run stops at the first failing test
        return run_lab(lab, path, visibility=("public", "hidden"), backend=backend,
                       first_failure=str(path).startswith(str(self.composed_dir)))

    def grade_lab(self, lab) -> None:
        jobs = {}
        with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
            for backend in BACKENDS:
                if backend == "redis-server" and not redis_server_binary():
                    continue
                for case_lab, kind, path in _cases(lab, self.composed_dir):
                    if (case_lab.id, kind, backend) in self.wanted:
                        jobs[(case_lab.id, kind, backend)] = pool.submit(self._run, case_lab, path, backend)
            self.done.update({k: f.result() for k, f in jobs.items()})
        self.done[lab.id] = True

    def get(self, lab, kind, backend):
        if lab.id not in self.done:
            self.grade_lab(lab)
        return self.done[(lab.id, kind, backend)]


@pytest.fixture(scope="module")
def outcomes(request, composed_dir):
    return Outcomes(_selected(request), composed_dir)


def _get(outcomes, lab, kind, backend):
    if backend == "redis-server" and not redis_server_binary():
        pytest.skip("redis-server is not installed")
    if backend == "fakeredis" and lab.needs_real_redis:
        pytest.skip(f"{lab.id} needs a real Redis server")
    res = outcomes.get(lab, kind, backend)
    assert res.status not in ("grader-error", "missing"), res.message
    assert res.tests, f"{lab.id}: no tests ran ({res.status}: {res.message})"
    return res


def _report(res) -> str:
    return "; ".join(f"{t.name}: {t.outcome} {t.message[:120]}" for t in res.tests if not t.passed)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lab", GRADED)
def test_solution_scores_full_marks(outcomes, lab, backend):
    res = _get(outcomes, lab, "solution", backend)
    assert res.status == "ok", res.message
    assert res.points == res.max_points > 0, _report(res)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lab", GRADED)
def test_starter_scores_zero(outcomes, lab, backend):
    res = _get(outcomes, lab, "starter", backend)
    assert res.points == 0, [t.name for t in res.tests if t.passed]


@pytest.mark.slow  # the whole known-wrong matrix: `run.py test --fast` leaves it out
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lab,kind", [_graded(lab, f"wrong/{w.name}") for lab in LABS for w in lab.wrong_files])
def test_wrong_implementation_loses_points(outcomes, composed_dir, lab, kind, backend):
    res = _get(outcomes, lab, kind, backend)
    composed = composed_dir / lab.id / kind.replace("/", "-")
    # graded once: a mistake that only a race shows (a GET before WATCH) is caught by a test that
    # forces the interleaving (lab.call_between), not by sixteen processes' luck
    assert res.points < res.max_points, (
        f"{lab.id}/{kind} composed onto solution.py ({composed}) scores full marks on {backend}: "
        "the tests do not catch what it gets wrong")


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.id)
def test_wrong_files_hold_only_differences(lab):
    for w in lab.wrong_files:
        same = redundant(lab, w)
        assert not same, f"{lab.id}/wrong/{w.name} repeats {', '.join(same)} exactly as solution.py has it: delete it there"
        assert Wrong(lab, w).mistake, f"{lab.id}/wrong/{w.name}: the docstring's first line must say the mistake"


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.id)
def test_lab_is_complete(lab):
    assert lab.functions, f"{lab.id}/lab.yml lists no functions"
    assert lab.test_files("public"), f"{lab.id} has no public tests"
    assert lab.test_files("hidden"), f"{lab.id} has no hidden tests"
    assert lab.wrong_files, f"{lab.id} has no wrong/ implementations"
    assert not stale_starters([lab]), f"{lab.id}/starter.py is stale: run `python3 run.py labs sync`"
    text = lab.solution_file.read_text(encoding="utf-8")
    for fn in lab.functions:
        assert f"def {fn}(" in text, f"{lab.id}: solution.py has no {fn}()"
