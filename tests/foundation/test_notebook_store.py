"""The stored notebooks' bookkeeping, without a kernel: what makes one stale, what the comparison of two
backends reports, and what the rendered page looks like."""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import shutil

import nbformat
import pytest

from foundation.nbcompare import compare_backends
from redis_course import paths
from redis_course.notebooks import execute, localize, render

PKG = execute.PKG


@pytest.fixture()
def course_copy(tmp_path, monkeypatch):
    """A copy of the package's output-relevant code and of lesson 00, with a stored notebook per language
    that is fresh (built without executing: the source's cells and the current key)."""
    pkg = tmp_path / "redis_course"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    books = tmp_path / "notebooks"
    books.mkdir()
    shutil.copyfile(paths.NOTEBOOKS / "00-start.py", books / "00-start.py")
    monkeypatch.setattr(execute, "PKG", pkg)
    monkeypatch.setattr(paths, "NOTEBOOKS", books)
    for lang in paths.LANGS:
        fake_store(books / "00-start.py", lang)
    return pkg, books


def fake_store(src, lang):
    nb = localize.student_notebook(src, lang)
    nb.metadata["course"].update(
        outputs_key=execute.outputs_key(src, lang),
        source_sha256=execute.source_digest(src),
        executed_on="fakeredis test",
    )
    path = localize.ipynb_path(src.stem, lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(execute.dumps(nb), encoding="utf-8")


def _executions(monkeypatch) -> list:
    done = []
    monkeypatch.setattr(execute, "store", lambda src, lang: done.append((src.name, lang)))
    return done


def test_editing_the_grader_re_executes_no_notebook(course_copy, monkeypatch):
    pkg, _ = course_copy
    assert execute.stale() == {}
    report = pkg / "labs" / "grading" / "report.py"
    report.write_text(report.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    (pkg / "site" / "build.py").write_text("# the site changed too\n", encoding="utf-8")
    assert execute.stale() == {}
    assert execute.regenerate(log=lambda *_: None) == [] and _executions(monkeypatch) == []


def test_a_changed_fakeredis_version_invalidates_every_stored_notebook(course_copy, monkeypatch):
    real_version = execute._version
    monkeypatch.setattr(execute, "_version", lambda p: "9.9.9" if p == "fakeredis" else real_version(p))
    assert set(execute.stale().values()) == {"outputs"} and len(execute.stale()) == 3
    done = _executions(monkeypatch)
    execute.regenerate(log=lambda *_: None)
    assert sorted(done) == [("00-start.py", lang) for lang in sorted(paths.LANGS)]


def test_lesson_and_backend_code_invalidate_the_notebooks(course_copy):
    pkg, _ = course_copy
    for changed in (pkg / "lessons" / "ids.py", pkg / "core" / "backend.py"):
        changed.write_text(changed.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
        assert set(execute.stale().values()) == {"outputs"} and len(execute.stale()) == 3
        for lang in paths.LANGS:
            fake_store(paths.NOTEBOOKS / "00-start.py", lang)


def test_a_changed_source_makes_its_notebooks_stale_and_orphans_go(course_copy):
    _, books = course_copy
    src = books / "00-start.py"
    src.write_text(src.read_text(encoding="utf-8") + "\n# %%\nprint('one more cell')\n", encoding="utf-8")
    assert set(execute.stale().values()) == {"cells"}
    assert len(render.stale_sources()) == 3 and "older than notebooks/00-start.py" in render.stale_sources()[0]
    (books / "en" / "99-gone.ipynb").write_text("{}", encoding="utf-8")
    assert execute.stale()[books / "en" / "99-gone.ipynb"] == "orphan"


# ------------------------------------------------------------------ rendering (nbconvert)


def _executed_like(lang="ru"):
    nb = localize.student_notebook(paths.NOTEBOOKS / "01-incr.py", lang)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("stream", name="stdout", text="2\n"),
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
            metadata={"alt": "A chart of counts per second"},
        ),
    ]
    return nb


def test_a_page_has_material_fences_admonition_download_link_and_alt_text():
    page, images = render.render(_executed_like("ru"), "01-incr", "ru")
    assert page.startswith('---\ntitle: "INCR и его семейство"\n---\n')
    assert '!!! info ""\n    ' in page and "](01-incr.ipynb)" in page and "--lang ru" in page
    assert '```text title="Вывод"\n1\n2\n```' in page  # consecutive texts in one fence
    assert "![A chart of counts per second](notebook_files/cell" in page and len(images) == 1
    assert "```python\nfrom redis_course import connect" in page


def test_headings_carry_the_english_ids_in_every_language():
    ids = {}
    for lang in paths.LANGS:
        page, _ = render.render(localize.student_notebook(paths.NOTEBOOKS / "01-incr.py", lang), "01-incr", lang)
        ids[lang] = [line.rsplit("{ #", 1)[1] for line in page.splitlines() if line.startswith("#") and "{ #" in line]
    assert ids["en"] and ids["en"][0] == "incr-and-its-family }"
    assert ids["ru"] == ids["en"] == ids["zh"]


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
    real = _nb(
        ("course:bbb:views\n", []), ("Redis 7.0.15\n", ["varies"]), ("-9223372036854775808\n", ["backend-differs"])
    )
    assert compare_backends(fake, real, "course:aaa:", "course:bbb:") == []


def test_compare_backends_flags_an_undeclared_difference():
    fake, real = _nb(("1\n", []), ("2\n", [])), _nb(("1\n", []), ("3\n", []))
    problems = compare_backends(fake, real, "p:", "q:")
    assert len(problems) == 1 and problems[0].startswith("cell 1 ") and "differs" in problems[0]


def test_compare_backends_flags_a_declared_difference_that_went_away():
    fake, real = (
        _nb(
            ("same\n", ["backend-differs"]),
        ),
        _nb(
            ("same\n", ["backend-differs"]),
        ),
    )
    problems = compare_backends(fake, real, "p:", "q:")
    assert len(problems) == 1 and "tagged backend-differs but both backends now print the same" in problems[0]


# A kernel that dies before it answers kernel_info is started once more; the second time the error
# says what the kernel printed.  The kernel's interpreter imports this sitecustomize first: it exits
# while a counter file says it has died fewer than DEATHS times.
DYING_KERNEL = """
import os, sys
count = os.environ["COURSE_TEST_KERNEL_DEATHS"]
n = int(open(count).read() or 0) if os.path.exists(count) else 0
if n < int(os.environ["COURSE_TEST_KERNEL_DIES"]):
    open(count, "w").write(str(n + 1))
    sys.stderr.write("kernel-died-on-purpose\\n")
    sys.stderr.flush()
    os._exit(3)
"""


def _dying_kernel(tmp_path, monkeypatch, deaths: int):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(DYING_KERNEL, encoding="utf-8")
    real_env = execute.kernel_env

    def env(*args, **kwargs):
        out = real_env(*args, **kwargs)
        out["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), out.get("PYTHONPATH", "")) if p)
        out["COURSE_TEST_KERNEL_DEATHS"] = str(tmp_path / "deaths")
        out["COURSE_TEST_KERNEL_DIES"] = str(deaths)
        return out

    monkeypatch.setattr(execute, "kernel_env", env)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    return nb, tmp_path / "deaths"


def _execute(nb, cwd):
    """execute() in a thread of its own: asyncio.run() refuses a thread whose event loop runs (the
    browser tests' Playwright keeps one in the worker's main thread)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(execute.execute, nb, cwd=cwd, timeout=60).result()


def test_a_kernel_that_dies_before_it_answers_is_started_once_more(tmp_path, monkeypatch):
    nb, deaths = _dying_kernel(tmp_path, monkeypatch, deaths=1)
    hooks = []  # the clients' exit hooks still registered: at exit, one of a dead kernel prints a traceback
    register, unregister = atexit.register, atexit.unregister
    monkeypatch.setattr(atexit, "register", lambda f, *a, **k: (hooks.append(f), register(f, *a, **k))[1])
    monkeypatch.setattr(atexit, "unregister", lambda f: (hooks.remove(f) if f in hooks else None, unregister(f))[1])
    out = _execute(nb, tmp_path)
    assert deaths.read_text() == "1", "the first kernel did not die: the test proves nothing"
    assert out.cells[0].outputs[0]["text"] == "42\n"
    left = [f for f in hooks if type(getattr(f, "__self__", None)).__name__ == "NotebookClient"]
    assert left == [], "the dead kernel's client still has its exit hook"


def test_a_kernel_that_dies_twice_says_what_it_printed(tmp_path, monkeypatch):
    nb, deaths = _dying_kernel(tmp_path, monkeypatch, deaths=2)
    with pytest.raises(RuntimeError) as err:
        _execute(nb, tmp_path)
    assert deaths.read_text() == "2"
    assert "(twice)" in str(err.value) and "kernel-died-on-purpose" in str(err.value)
