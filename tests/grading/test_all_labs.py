"""Every lab under labs/, on both backends (a private redis-server and the fakeredis server):
solution.py scores full marks, starter.py scores 0, every wrong/*.py (composed onto solution.py,
see redis_course.labs.authoring.wrong) scores less than full marks and fails first the test its ``Caught by:``
line names (the wrong files of a lab and backend are graded in one grader process and one box,
emptied before each as between two tests: ``run_variants``), and starter.py is what ``course labs sync``
generates.  New labs are covered as they appear.  Only the runs the selected tests need are made
(``-k 00`` grades lab 00 only)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from redis_course.labs.authoring.model import discover
from redis_course.labs.authoring.starter import stale_starters
from redis_course.labs.authoring.wrong import Wrong, redundant
from redis_course.labs.engine.runner import run_lab, run_variants
from redis_course.labs.engine.zygote import zygote
from redis_course.core.servers import redis_server_binary

LABS = [lab for lab in discover() if lab.solution_file.exists()]
BACKENDS = ["redis-server", "fakeredis"]


def _graded(lab, *values):
    """A parameter of a test that reads a lab's grading runs: that lab's xdist group (one worker grades it)."""
    return pytest.param(lab, *values, id="-".join([lab.id, *values]), marks=pytest.mark.xdist_group(f"lab-{lab.id}"))


GRADED = [_graded(lab) for lab in LABS]


def _cases(lab, composed_dir):
    yield lab, "solution", lab.solution_file, ()
    yield lab, "starter", lab.starter_file, ()
    for w in lab.wrong_files:
        wrong = Wrong(lab, w)
        yield lab, f"wrong/{w.name}", wrong.write(composed_dir), wrong.caught_by


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
        """A whole grading run, as a student's file gets (the solution, the starter)."""
        return run_lab(lab, path, visibility=("public", "hidden"), backend=backend)

    def grade_lab(self, lab) -> None:
        """The solution and the starter each in a grading run of its own, as a student's file is; the
        known-wrong files of each backend in one grader process (:func:`run_variants`: one box,
        emptied before each file, the same tests, stopping at each file's first failure)."""
        jobs, variants = {}, {}
        # every run at once: they mostly wait (pauses, leases, cool-downs), and a lab's slowest run,
        # not the sum of its runs, then sets how long the worker holding the lab spends on it
        with ThreadPoolExecutor(2 * len(BACKENDS) + len(BACKENDS)) as pool:
            for backend in BACKENDS:
                if backend == "redis-server" and not redis_server_binary():
                    continue
                wrong = []
                for case_lab, kind, path, first in _cases(lab, self.composed_dir):
                    if (case_lab.id, kind, backend) not in self.wanted:
                        continue
                    if kind.startswith("wrong/"):
                        wrong.append(((case_lab.id, kind, backend), (path, first)))
                    else:
                        jobs[(case_lab.id, kind, backend)] = pool.submit(self._run, case_lab, path, backend)
                if wrong:
                    variants[tuple(k for k, _ in wrong)] = pool.submit(
                        run_variants, lab, [f for _, f in wrong], backend=backend
                    )
            self.done.update({k: f.result() for k, f in jobs.items()})
            for keys, f in variants.items():
                self.done.update(zip(keys, f.result()))
        self.done[lab.id] = True

    def get(self, lab, kind, backend):
        if lab.id not in self.done:
            self.grade_lab(lab)
        return self.done[(lab.id, kind, backend)]


@pytest.fixture(scope="module")
def outcomes(request, composed_dir):
    # the runs start on a thread pool: one zygote, started here (the worker's main thread), forks all
    # their graders, as `course grade` does (a run started from a thread alone has none to fork from)
    with zygote():
        yield Outcomes(_selected(request), composed_dir)


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
    wrong = Wrong(lab, lab.path / kind)
    composed = composed_dir / lab.id / kind.replace("/", "-")
    # graded once: a mistake that only a race shows (a GET before WATCH) is caught by a test that
    # forces the interleaving (lab.call_between), not by sixteen processes' luck
    assert res.points < res.max_points, (
        f"{lab.id}/{kind} composed onto solution.py ({composed}) scores full marks on {backend}: "
        "the tests do not catch what it gets wrong"
    )
    failed = [_function(t.name) for t in res.tests if t.outcome in ("failed", "error")] or [f"none ({res.status})"]
    assert wrong.caught_by, (
        f"{lab.id}/{kind}: its docstring names no test written for the mistake; "
        f"add the line 'Caught by: {failed[0]}' (the test that failed first here)"
    )
    named = [t for t in res.tests if _function(t.name) in wrong.caught_by and t.outcome != "skipped"]
    assert not named or any(t.outcome in ("failed", "error") for t in named), (
        f"{lab.id}/{kind}: {', '.join(wrong.caught_by)} no longer fails on {backend} (the first test that "
        f"failed is {failed[0]}): write that name on its 'Caught by:' line, or mend the test"
    )


def _function(test_name: str) -> str:
    """A test's function name: its name without the parameters' ids."""
    return test_name.split("[", 1)[0]


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.id)
def test_wrong_files_hold_only_differences(lab):
    for w in lab.wrong_files:
        same = redundant(lab, w)
        assert not same, (
            f"{lab.id}/wrong/{w.name} repeats {', '.join(same)} exactly as solution.py has it: delete it there"
        )
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
