"""The files only the student edition has: its README for students, ``edition.json`` and the GitHub
Classroom workflow (:mod:`..check.classroom`).

The README says what a student needs and nothing else: the two commands, how to check a lab, where
the lessons, notebooks and labs are, how to hand in.  Its text comes from the course's catalog
(:mod:`redis_course.l10n`), one section per language, the edition's language first.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...l10n import _
from ...paths import LANG_NAMES, LANGS
from ..check.classroom import write_workflow
from ..authoring.model import Lab

EDITION_FILE = "edition.json"


def _section(lang: str) -> list[str]:
    def tr(text: str, **fields: object) -> str:  # ``tr`` is an extraction keyword (catalogs.KEYWORDS)
        return _(text, lang=lang, **fields)

    return [
        f"## {LANG_NAMES[lang]}",
        "",
        tr("You need `python3` (3.11 or newer) and `git`. Two commands:"),
        "",
        "```bash",
        "python3 run.py serve    # " + tr("the course site with every lesson, at http://127.0.0.1:8000"),
        "python3 run.py test     # " + tr("checks that the course's tools and your lab files work here"),
        "```",
        "",
        tr("The first run sets everything up in `.venv/` (a few minutes); later runs start at once."),
        "",
        "### " + tr("Check a lab"),
        "",
        tr(
            "Each lab is a file you complete: `labs/NN-topic/lab.py`. What to write is on the lab's page "
            "(`docs/{code}/NN-topic/lab.md`) and in the docstrings of `lab.py`. Then:",
            code=lang,
        ),
        "",
        "```bash",
        f"python3 run.py check 01 --lang {lang}   # " + tr("one lab: your points, with a hint for each failed test"),
        f"python3 run.py check --lang {lang}      # " + tr("every lab"),
        "```",
        "",
        tr(
            "`check` runs the lab's tests (`labs/NN-topic/tests/public/`) on a private Redis that it starts "
            "and stops itself; your code runs in a separate process. To use your own Redis server instead, "
            "set `REDIS_URL=redis://127.0.0.1:6379/0`: the course writes only keys under its own prefix "
            "there and deletes them afterwards."
        ),
        "",
        "### " + tr("Where things are"),
        "",
        "| " + tr("path") + " | " + tr("what it holds") + " |",
        "|---|---|",
        f"| `docs/{lang}/NN-topic/` | " + tr("the lesson (`index.md`) and the lab's page (`lab.md`)") + " |",
        f"| `notebooks/{lang}/NN-topic.ipynb` | "
        + tr("the lesson's notebook, which `python3 run.py jupyter --lang {code}` opens in JupyterLab", code=lang)
        + " |",
        "| `labs/NN-topic/lab.py` | " + tr("your work") + " |",
        "| `labs/NN-topic/tests/public/` | " + tr("the tests that `check` runs") + " |",
        "",
        "### " + tr("Handing in"),
        "",
        tr(
            "Commit and push `labs/`. If your course uses GitHub Classroom, every push runs `check` for each "
            "lab and shows your points in the Actions tab of your repository."
        ),
        "",
    ]


def readme(first: str = "en") -> str:
    """The student edition's README.md: one section per language, ``first`` first."""
    order = [first] + [x for x in LANGS if x != first]
    links = " · ".join(f"[{LANG_NAMES[x]}](#{LANG_NAMES[x].lower().replace(' ', '-')})" for x in order)
    lines = [
        "# " + _("Redis counters, atomicity and rate limiting", lang=first),
        "",
        _("Your copy of the course: the lessons, the notebooks and the labs you complete.", lang=first),
        "",
        links,
        "",
    ]
    for lang in order:
        lines += _section(lang)
    return "\n".join(lines).rstrip() + "\n"


def manifest(**fields: object) -> dict:
    """What ``edition.json`` says: ``{"edition": "student", ...}`` (see :func:`redis_course.paths.edition`)."""
    return {"edition": "student", **fields}


def write_student_files(out: Path, labs: list[Lab], *, first_lang: str = "en", **manifest_fields: object) -> None:
    """README.md for students, edition.json and the GitHub Classroom workflow."""
    (out / "README.md").write_text(readme(first_lang), encoding="utf-8")
    (out / EDITION_FILE).write_text(
        json.dumps(manifest(**manifest_fields), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    write_workflow(out, labs)
