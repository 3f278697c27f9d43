"""Notebooks: stored executed, regression-tested with pytest-notebook on both backends, and compared.

Every ``notebooks/<lang>/*.ipynb`` is re-executed with pytest-notebook's ``NBRegressionFixture``, once
on fakeredis and once on the real server, and must reproduce its stored outputs, except where
outputs legitimately vary: cells tagged ``varies`` (timings, measured rates, the backend's name),
the run's key prefix, and on the real server the cells tagged ``backend-differs``.  On top of that,
the two runs of each notebook are compared with each other (:mod:`nbcompare`): a ``backend-differs``
cell must really differ, every other cell must agree.
"""

from __future__ import annotations

import os
import secrets
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from pytest_notebook.nb_regression import NBRegressionFixture

from foundation.nbcompare import compare_backends
from foundation.shared import REAL_URL, real_redis_up
from redis_course import connect, paths
from redis_course.notebooks import DIFFERS_TAG, MASK_TAG, execute, ipynb_path, lesson_of, sources

SOURCES = sources()
STORED = [(lesson_of(src), lang) for src in SOURCES for lang in paths.LANGS]
REQUIRE_REAL = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"
IGNORED_ALWAYS = (
    "/metadata/language_info",
    "/metadata/course/executed_on",
    "/cells/*/metadata/execution",
    "/cells/*/outputs/*/traceback",
)


def ignored(nb, backend: str) -> tuple[str, ...]:
    """diff_ignore paths: the ``varies`` cells, and on the real server the ``backend-differs`` cells."""
    tags = {MASK_TAG} | ({DIFFERS_TAG} if backend == "redis" else set())
    cells = [f"/cells/{i}/outputs" for i, c in enumerate(nb.cells) if tags & set(c.metadata.get("tags", []))]
    return IGNORED_ALWAYS + tuple(cells)


def regression(lesson: str, lang: str, redis_url: str | None):
    """Re-execute one stored notebook with pytest-notebook; (result, prefix) or (exception, prefix)."""
    path = ipynb_path(lesson, lang)
    stored = nbformat.read(path, as_version=4)
    prefix = execute.STORED_PREFIX if not redis_url else f"course:nbt{secrets.token_hex(4)}:"
    fixture = NBRegressionFixture(
        exec_timeout=execute.CELL_TIMEOUT,
        exec_cwd=str(paths.NOTEBOOKS),
        diff_use_color=False,
        exec_env=execute.kernel_env(redis_url, lang, prefix),
        diff_ignore=ignored(stored, "redis" if redis_url else "fakeredis"),
        diff_replace=(("/cells/*/outputs", prefix.replace(":", r"\:"), execute.STORED_PREFIX),) if redis_url else (),
    )
    try:
        return fixture.check(str(path), raise_errors=False), prefix
    except Exception as exc:  # noqa: BLE001 - a cell that failed: reported by the test of this notebook
        return exc, prefix
    finally:
        if redis_url:
            connect(redis_url, prefix=prefix).cleanup()


def _selected(session) -> tuple[set, set]:
    """(lesson, lang) pairs that the selected tests need on fakeredis, and on the real server."""
    fake, real = set(), set()
    for item in session.items:
        spec = getattr(item, "callspec", None)
        if item.module.__name__ != __name__ or spec is None or "lesson" not in spec.params:
            continue
        pair = (spec.params["lesson"], spec.params["lang"])
        if "real_server" in item.name or "agree" in item.name:
            real.add(pair)
        if "real_server" not in item.name:
            fake.add(pair)
    return fake, real


class Runs:
    """The selected notebook runs, made one lesson at a time when a test first asks for that lesson:
    its languages on both backends, all at once.  The tests of one
    lesson are one xdist group, so each lesson runs in exactly one worker and the lessons spread over them."""

    def __init__(self, session):
        self.fake, self.real_pairs = _selected(session)
        self.real = REAL_URL if self.real_pairs and real_redis_up() else None
        self.done: dict = {}

    def run_lesson(self, lesson: str) -> None:
        jobs = [(les, lang, None) for les, lang in sorted(self.fake) if les == lesson] + (
            [(les, lang, self.real) for les, lang in sorted(self.real_pairs) if les == lesson] if self.real else []
        )
        # all of them at once: a lesson's runs spend much of their time waiting (07's outages and
        # timeouts, 05's crash and failover demos on private servers), and what waits leaves a core idle
        with ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
            results = list(pool.map(lambda job: regression(*job), jobs))
        self.done.update(
            {(les, lang, "redis" if url else "fakeredis"): res for (les, lang, url), res in zip(jobs, results)}
        )
        self.done[lesson] = True

    def __contains__(self, key) -> bool:
        if key[0] not in self.done:
            self.run_lesson(key[0])
        return key in self.done

    def __getitem__(self, key):
        if key[0] not in self.done:
            self.run_lesson(key[0])
        return self.done[key]


@pytest.fixture(scope="module")
def runs(request):
    """{(lesson, lang, "fakeredis"|"redis"): (NBRegressionResult or exception, prefix)} for the selected tests."""
    return Runs(request.session)


def _run_params():
    """(lesson, lang) of every stored notebook, each in its lesson's xdist group."""
    return [
        pytest.param(lesson, lang, id=f"{lang}-{lesson}", marks=pytest.mark.xdist_group(f"notebook-{lesson}"))
        for lesson, lang in STORED
    ]


def _result(runs, lesson, lang, backend):
    if (lesson, lang, backend) not in runs:
        if REQUIRE_REAL:
            pytest.fail(f"the real Redis at {REAL_URL} is required (COURSE_REQUIRE_REAL_REDIS=1) but is not up")
        pytest.skip(f"no real Redis at {REAL_URL}")
    result, prefix = runs[(lesson, lang, backend)]
    assert not isinstance(result, Exception), f"{lang}/{lesson}.ipynb failed on {backend}: {result}"
    return result, prefix


def test_there_are_notebooks():
    assert SOURCES and SOURCES[0].name == "00-start.py" and len(STORED) == 3 * len(SOURCES)


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_stored_notebooks_match_their_source(src):
    """The cells of every stored notebook are what its source generates (`python3 run.py notebooks` fixes it)."""
    bad = {lang: execute.state(src, lang) for lang in paths.LANGS}
    assert all(why in ("fresh", "outputs") for why in bad.values()), f"{bad}: run `python3 run.py notebooks --execute`"


@pytest.mark.slow
@pytest.mark.parametrize("lesson, lang", _run_params())
def test_stored_outputs_are_reproduced_on_fakeredis(runs, lesson, lang):
    result, _ = _result(runs, lesson, lang, "fakeredis")
    assert not result.diff_filtered, (
        f"{lang}/{lesson}.ipynb: outputs drifted from the stored ones "
        f"(`python3 run.py notebooks --execute` if the change is meant):\n" + result.diff_string
    )


@pytest.mark.slow
@pytest.mark.real_redis
@pytest.mark.parametrize("lesson, lang", _run_params())
def test_stored_outputs_are_reproduced_on_the_real_server(runs, lesson, lang):
    result, _ = _result(runs, lesson, lang, "redis")
    assert "Redis 7." in execute.executed_on(REAL_URL)
    assert not result.diff_filtered, (
        f"{lang}/{lesson}.ipynb on Redis differs from the stored outputs:\n" + result.diff_string
    )


@pytest.mark.slow
@pytest.mark.real_redis
@pytest.mark.parametrize("lesson, lang", _run_params())
def test_backends_agree_except_where_the_lesson_says(runs, lesson, lang):
    fake, prefix_fake = _result(runs, lesson, lang, "fakeredis")
    real, prefix_real = _result(runs, lesson, lang, "redis")
    problems = compare_backends(fake.nb_final, real.nb_final, prefix_fake, prefix_real)
    assert problems == [], "\n".join(problems)
