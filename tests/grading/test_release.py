"""``course release``: the student edition leaks nothing hidden and works on its own."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from redis_course.labs.authoring.model import discover
from redis_course.labs.publish.release import (
    release,
    strip_catalog,
    strip_markdown,
    strip_notebook,
    strip_percent_script,
)
from redis_course.labs.authoring.starter import make_starter, solution_lines

ROOT = Path(__file__).resolve().parents[2]
LABS = [lab for lab in discover() if lab.solution_file.exists()]
MIN_LINE = 16  # shorter docstring lines are too common to prove a leak
#: A solution line this long is distinctive on its own; shorter ones (``with r.pipeline() as p:``,
#: ``except redis.exceptions.ResponseError as e:``) are idioms the lessons teach, so for them a leak
#: is two consecutive lines of a solution body appearing together.
DISTINCT_LINE = 60
PAIR_LEN = 32


def _norm(text: str) -> str:
    """Lines stripped of indentation, blank lines dropped: copied code is found whatever its indent."""
    return "\n".join(ln.strip() for ln in text.splitlines() if ln.strip())


def solution_secrets(source: str) -> list[str]:
    body = [ln.strip() for ln in solution_lines(source) if ln.strip() and not ln.strip().startswith("#")]
    out = [ln for ln in body if len(ln) >= DISTINCT_LINE]
    out += [f"{a}\n{b}" for a, b in zip(body, body[1:]) if len(a) + len(b) >= PAIR_LEN]
    return out


def hidden_secrets() -> dict[str, str]:
    """What must never reach students: hidden test names, solution body lines, grader strings."""
    secrets = {}
    for lab in LABS:
        for secret in solution_secrets(lab.solution_file.read_text(encoding="utf-8")):
            secrets[secret] = f"{lab.id}/solution.py"
        for f in lab.test_files("hidden"):
            tree = ast.parse(f.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                    secrets[node.name] = f"{lab.id}/tests/hidden/{f.name}"
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "canary" in node.value:
                    secrets[node.value] = f"{lab.id}/tests/hidden/{f.name}"
        for w in lab.wrong_files:
            doc = ast.get_docstring(ast.parse(w.read_text(encoding="utf-8"))) or ""
            if len(doc) >= MIN_LINE:
                secrets[doc.splitlines()[0]] = f"{lab.id}/wrong/{w.name}"
    secrets.update(hidden_messages())
    return secrets


#: What students read anyway: a hidden message's line found here is not a secret.
PUBLIC_TEXT = (
    "labs/*/tests/public/**/*.py",
    "labs/*/hints.yml",
    "labs/*/lab.yml",
    "docs/**/*.md",
    "src/redis_course/**/*.py",
    "notebooks/*.py",
)


def hidden_messages() -> dict[str, str]:
    """Hidden tests' titles and failure messages that no public file uses, in English and in every
    translation the instructor's catalogs hold: none may ship."""
    from redis_course.i18n import catalogs

    out = {}
    ru, zh = catalogs.read("ru"), catalogs.read("zh")
    public = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for pattern in PUBLIC_TEXT
        for p in ROOT.glob(pattern)
        if p.is_file()
    )
    template = catalogs.extract()
    for m in template:  # the translations of messages public files use are said openly too
        if m.id and any("/tests/hidden/" not in loc[0] for loc in m.locations):
            ids = m.id if isinstance(m.id, (list, tuple)) else [m.id]
            for cat in (ru, zh):
                t = cat.get(ids[0], context=m.context)
                if t is not None and not t.fuzzy:
                    public += "\n" + "\n".join(
                        x for x in (t.string if isinstance(t.string, (list, tuple)) else [t.string]) if x
                    )
    for m in template:
        files = {loc[0] for loc in m.locations}
        if not m.id or not files or not all("/tests/hidden/" in f for f in files):
            continue
        ids = m.id if isinstance(m.id, (list, tuple)) else [m.id]
        texts = list(ids)
        for cat in (ru, zh):
            t = cat.get(ids[0], context=m.context)
            if t is not None and not t.fuzzy:  # a fuzzy string is another message's translation
                texts += [x for x in (t.string if isinstance(t.string, (list, tuple)) else [t.string]) if x]
        for text in texts:
            for line in text.splitlines():  # each line of the message, as written and as a .po file holds it
                distinct = len(line.split()) >= 4 or sum(ord(c) > 0x2E80 for c in line) >= 8  # a phrase, not a word
                if distinct and line.strip() not in public:  # what the course also says openly is no secret
                    origin = f"{sorted(files)[0]} ({m.context or 'message'})"
                    out[line.strip()] = origin
                    out[line.strip().replace("\\", "\\\\").replace('"', '\\"')] = origin
    return out


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    return release(tmp_path_factory.mktemp("release") / "student")


def test_labs_hold_only_student_files(edition):
    for lab in LABS:
        d = edition / "labs" / lab.id
        want = make_starter(lab.solution_file.read_text(encoding="utf-8"))  # staleness: test_all_labs
        assert (d / "lab.py").read_text(encoding="utf-8") == want
        assert (d / "lab.yml").exists() and (d / "tests" / "public").is_dir()
        for private in ("solution.py", "starter.py", "wrong", "tests/hidden"):
            assert not (d / private).exists(), f"{lab.id}/{private} was released"
    assert not (edition / "tests" / "grading").exists()
    assert not (edition / ".git").exists() and not (edition / ".venv").exists()


def test_instructor_and_maintainer_guides_stay_behind(edition):
    for name in ("INSTRUCTORS.md", "CONTRIBUTING.md", "labs/README.md"):
        assert (ROOT / name).is_file(), name
        assert not (edition / name).exists(), f"{name} was released"
    headings = [ln for ln in (ROOT / "INSTRUCTORS.md").read_text(encoding="utf-8").splitlines() if ln.startswith("## ")]
    assert "## Regrade one student" in headings and "## Gradescope" in headings
    for md in edition.rglob("*.md"):
        text = md.read_text(encoding="utf-8")
        copied = [h for h in headings if h in text.splitlines()]
        assert "Instructors' guide" not in text and len(copied) < 2, f"{md.relative_to(edition)} copies the guide"
    # what the edition's own code says about itself ships with it, and is current there
    page = "ARCHITECTURE.md"
    assert (edition / page).read_text(encoding="utf-8") == (ROOT / page).read_text(encoding="utf-8")


def test_nothing_hidden_leaks(edition):
    secrets = hidden_secrets()
    assert any("canary" in s for s in secrets), "the demo lab's grader canary was not found"
    titles = {s for s, origin in secrets.items() if "(test title)" in origin}
    assert {"Each post of the grader canary has a counter of its own", "评分金丝雀的每篇文章都有自己的计数器"} <= titles
    leaks = []
    for f in edition.rglob("*"):
        if not f.is_file():
            continue
        raw = f.read_bytes().decode("utf-8", "replace")
        if f.suffix == ".ipynb":  # the code of a notebook, as a reader sees it
            import json

            raw += "\n" + "\n".join("".join(c.get("source", "")) for c in json.loads(raw).get("cells", []))
        text = raw + "\n" + _norm(raw)
        for secret, origin in secrets.items():
            if secret in text:
                leaks.append(f"{f.relative_to(edition)} contains {secret!r} from {origin}")
    assert not leaks, "\n".join(leaks[:20])


def test_solution_regions_are_removed_from_pages_and_notebooks():
    page = "Intro\n<!-- BEGIN SOLUTION -->\nuse INCR views\n<!-- END SOLUTION -->\nEnd\n"
    assert strip_markdown(page) == "Intro\nEnd\n"
    script = (
        '# %% [markdown]\n# Title\n\n# %% tags=["solution"]\nr.incr("x")\n\n'
        '# %%\ndef f(r):\n    # BEGIN SOLUTION\n    return r.incr("x")\n    # END SOLUTION\n'
    )
    out = strip_percent_script(script)
    assert 'r.incr("x")' not in out and "# Title" in out and 'raise NotImplementedError("f: your code here")' in out
    nb = (
        '{"cells": [{"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "secret", "outputs": []},'
        ' {"cell_type": "code", "metadata": {}, "source": "shown", "outputs": [{"text": "kept"}]}], "metadata": {}}'
    )
    out = strip_notebook(nb)
    assert "secret" not in out and "shown" in out and "kept" in out


def _course(edition: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COURSE_ROOT=str(edition))
    env.pop("REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "redis_course.cli", *args],
        cwd=edition,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_student_check_runs_and_scores_zero_on_starters(edition):
    res = _course(edition, "check", "--lang", "en")
    assert res.returncode == 1, res.stdout + res.stderr
    total = re.search(r"^Total\s+(\S+)/(\S+)", res.stdout, re.M)
    assert total, res.stdout
    assert float(total.group(1)) == 0 and float(total.group(2)) > 0, res.stdout
    for lab in LABS:
        assert lab.id in res.stdout


def test_student_edition_commands_work(edition):
    res = _course(edition, "labs", "sync", "--check")
    assert "stale" not in res.stdout, res.stdout
    res = _course(edition, "--help")
    assert res.returncode == 0 and "check" in res.stdout


def test_release_refuses_to_write_inside_the_repository():
    from redis_course.labs.publish.release import ReleaseError

    with pytest.raises(ReleaseError):
        release(ROOT / "labs" / "student-edition")


def test_released_catalogs_drop_entries_only_private_files_use():
    po = (
        'msgid ""\nmsgstr ""\n"Language: ru\\n"\n\n'
        '#: labs/00-demo/tests/hidden/test_views_hidden.py\nmsgctxt "test title"\nmsgid "Secret"\nmsgstr "Тайна"\n\n'
        "#: labs/00-demo/tests/hidden/test_views_hidden.py\n#: labs/00-demo/tests/public/test_views.py\n"
        'msgid "Shared"\nmsgstr "Общее"\n\n'
        '#: labs/00-demo/starter.py\nmsgctxt "starter"\nmsgid "Doc"\nmsgstr "Док"\n\n'
        'msgid "Unused"\nmsgstr "Не нужно"\n\n'  # no file named: kept (tests/student/ uses some)
        '#: labs/01-incr/tests/public/test_counters.py\n#, fuzzy\nmsgctxt "test title"\nmsgid "Public"\n'
        'msgstr "Тайна"\n'
    )  # a fuzzy guess copied from the hidden entry: emptied
    out = strip_catalog(po)
    assert "Secret" not in out and "Тайна" not in out and "Doc" not in out
    assert (
        "Shared" in out
        and "Unused" in out
        and 'msgid "Public"\nmsgstr ""' in out
        and "hidden" not in out
        and out.startswith('msgid ""')
    )


@pytest.fixture(scope="module")
def edition_zh(tmp_path_factory) -> Path:
    return release(tmp_path_factory.mktemp("release") / "student-zh", lang="zh")


def test_release_in_chinese_checks_lab_00_in_chinese(edition_zh):
    lab_py = (edition_zh / "labs" / "00-demo" / "lab.py").read_text(encoding="utf-8")
    assert "统计页面浏览量" in lab_py and "count page views" not in lab_py
    compile(lab_py, "lab.py", "exec")
    res = _course(edition_zh, "check", "00")  # no --lang: the edition's language
    assert res.returncode == 1, res.stdout + res.stderr
    english = [ln for ln in res.stdout.splitlines() if re.search(r"\b[A-Za-z]+(?:[ \t]+[A-Za-z]+){3}\b", ln)]
    assert not english, res.stdout
    assert "总计" in res.stdout and "还没有写任何代码" in res.stdout, res.stdout
