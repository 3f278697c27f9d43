"""Notebooks: generated files are fresh, every notebook runs on both backends, and they agree.

Each source is executed once on fakeredis and once on the real server (in parallel, two at a time),
each run with its own key prefix; ``compare_backends`` must find no difference the lesson does not
declare, and no cell may fail unless it is tagged ``raises-exception``.
"""
from __future__ import annotations

import os
import secrets
import shutil
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from foundation.shared import REAL_URL, real_redis_up
from redis_course import connect, notebooks, paths

SOURCES = notebooks.sources()
REQUIRE_REAL = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"


def _run(src, redis_url):
    prefix = f"course:nbtest:{secrets.token_hex(4)}:"
    try:
        nb = notebooks.execute(notebooks.student_notebook(src, "en"), redis_url=redis_url, prefix=prefix)
        return prefix, nb, None
    except Exception as exc:  # noqa: BLE001 - reported by the test of this notebook
        return prefix, None, exc
    finally:
        if redis_url:
            connect(redis_url, prefix=prefix).cleanup()


@pytest.fixture(scope="module")
def executed():
    """{(source name, "fakeredis"|"redis"): (prefix, notebook or None, exception or None)}."""
    real = REAL_URL if real_redis_up() else None
    jobs = [(src, None) for src in SOURCES] + ([(src, real) for src in SOURCES] if real else [])
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: _run(*job), jobs))
    return {(src.name, "redis" if url else "fakeredis"): res for (src, url), res in zip(jobs, results)}


def _errors(nb) -> list[str]:
    bad = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                bad.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}")
    return bad


def _ok(executed, src, backend):
    prefix, nb, exc = executed[(src.name, backend)]
    assert exc is None, f"{src.name} failed on {backend}: {exc}"
    assert not _errors(nb), _errors(nb)
    return prefix, nb


def test_there_are_notebooks():
    assert SOURCES and SOURCES[0].name == "00-start.py"


def test_generated_notebooks_are_fresh():
    stale = notebooks.sync(check=True)
    assert stale == [], f"stale: {stale}; run `python3 run.py notebooks`"


def test_a_changed_source_makes_the_notebooks_stale(tmp_path, monkeypatch):
    copy = tmp_path / "notebooks"
    for lang in paths.LANGS:  # one notebook is enough, and keeps this quick
        (copy / lang).mkdir(parents=True)
    shutil.copyfile(paths.NOTEBOOKS / "00-start.py", copy / "00-start.py")
    monkeypatch.setattr(paths, "NOTEBOOKS", copy)
    notebooks.sync()  # the copy is fresh whatever the state of the working tree
    assert notebooks.sync(check=True) == []
    src = copy / "00-start.py"
    src.write_text(src.read_text(encoding="utf-8") + "\n# %%\nprint('one more cell')\n", encoding="utf-8")
    stale = notebooks.sync(check=True)
    assert sorted(stale) == sorted(copy / lang / "00-start.ipynb" for lang in paths.LANGS)
    assert notebooks.sync() == stale and notebooks.sync(check=True) == []
    (copy / "en" / "99-gone.ipynb").write_text("{}", encoding="utf-8")  # no source: stale, and removed
    assert notebooks.sync() == [copy / "en" / "99-gone.ipynb"] and not (copy / "en" / "99-gone.ipynb").exists()


@pytest.mark.slow
@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_notebook_runs_on_fakeredis(executed, src):
    _ok(executed, src, "fakeredis")


@pytest.mark.slow
@pytest.mark.real_redis
@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_notebook_agrees_across_backends(executed, src):
    if (src.name, "redis") not in executed:
        if REQUIRE_REAL:
            pytest.fail(f"the real Redis at {REAL_URL} is required (COURSE_REQUIRE_REAL_REDIS=1) but is not up")
        pytest.skip(f"no real Redis at {REAL_URL}")
    prefix_fake, fake = _ok(executed, src, "fakeredis")
    prefix_real, real = _ok(executed, src, "redis")
    assert "Redis 7." in real.metadata["course"]["executed_on"]
    assert fake.metadata["course"]["executed_on"] == "fakeredis" or "fakeredis" in fake.metadata["course"]["executed_on"]
    problems = notebooks.compare_backends(fake, real, prefix_fake, prefix_real)
    assert problems == [], "\n".join(problems)


# ------------------------------------------------------------------ compare_backends, unit level

def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    for text, tags in cells:
        cell = nbformat.v4.new_code_cell("print(x)", metadata={"tags": tags} if tags else {})
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
    return nb


def test_compare_backends_accepts_equal_runs_and_masks_prefixes():
    fake = _nb(("course:aaa:views\n", []), ("fakeredis 2.41\n", ["varies"]), ("(error)\n", ["backend-differs"]))
    real = _nb(("course:bbb:views\n", []), ("Redis 7.0.15\n", ["varies"]), ("-9223372036854775808\n", ["backend-differs"]))
    assert notebooks.compare_backends(fake, real, "course:aaa:", "course:bbb:") == []


def test_compare_backends_flags_an_undeclared_difference():
    fake, real = _nb(("1\n", []), ("2\n", [])), _nb(("1\n", []), ("3\n", []))
    problems = notebooks.compare_backends(fake, real, "p:", "q:")
    assert len(problems) == 1 and problems[0].startswith("cell 1 ") and "differs" in problems[0]


def test_compare_backends_flags_a_declared_difference_that_went_away():
    fake, real = _nb(("same\n", ["backend-differs"]),), _nb(("same\n", ["backend-differs"]),)
    problems = notebooks.compare_backends(fake, real, "p:", "q:")
    assert len(problems) == 1 and "tagged backend-differs but both backends now print the same" in problems[0]


def test_error_outputs_are_found():
    nb = _nb(("ok\n", []), ("ok\n", ["raises-exception"]))
    nb.cells[1].outputs.append(nbformat.v4.new_output("error", ename="ResponseError", evalue="boom", traceback=[]))
    assert _errors(nb) == []
    nb.cells[0].outputs.append(nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=[]))
    assert _errors(nb) == ["cell 0: ValueError: bad"]
