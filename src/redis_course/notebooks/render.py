"""Stored notebooks → ``docs/<lang>/NN-topic/notebook.md``, with nbconvert and nothing executed.

:class:`CoursePageExporter` is nbconvert's Markdown exporter with the course's template
(``templates/course-page``): Material's fences and admonitions, the download link, headings with the
English ids (so the language switch keeps the section), images written to ``notebook_files/`` with
alt text from the output's or the cell's metadata.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

import nbformat
from nbconvert.exporters import MarkdownExporter
from nbconvert.preprocessors import ExtractOutputPreprocessor, Preprocessor

from .. import paths
from ..l10n import _
from ..paths import LANGS
from .localize import _HEADING, ipynb_path, lesson_of, sources

TEMPLATES = Path(__file__).resolve().parent / "templates"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
IMAGE_DIR = "notebook_files"
DARK_MIME = "image/vnd.course.dark+png"  # charts.DARK_MIME (charts imports matplotlib: not needed here)


class HeadingIds(Preprocessor):
    """Append ``{ #id }`` to each markdown heading: the ids of the English notebook, in order."""

    def preprocess(self, nb, resources):
        ids = iter(nb.metadata.get("course", {}).get("heading_ids", []))
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = _with_ids(cell.source, ids)
        return nb, resources


def _with_ids(markdown: str, ids) -> str:
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        hid = next(ids, None) if m and "{" not in line else None
        out.append(f"{line} {{ #{hid} }}" if hid else line)
    return "\n".join(out)


def fence(text: str, lang: str, title: str | None = None) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    head = f"{ticks}{lang}" + (f' title="{title}"' if title else "")
    return f"{head}\n{text.rstrip()}\n{ticks}\n"


def _text_of(out) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return _ANSI.sub("", out.get("text", ""))
    if kind in ("execute_result", "display_data"):
        return _ANSI.sub("", str(out.get("data", {}).get("text/plain", "")))
    if kind == "error":
        return f"{out.get('ename')}: {_ANSI.sub('', out.get('evalue', ''))}"
    return ""


def alt_text(cell, out, lang: str, title: str) -> str:
    """The output's ``metadata.course.alt`` (what :func:`redis_course.charts.show` writes) or
    ``metadata.alt``, else the cell's ``metadata.alt`` (a string or {lang: text}), else the page title
    with the word "chart"."""
    meta = out.get("metadata", {})
    for alt in (meta.get("course", {}).get("alt"), meta.get("alt"), cell.get("metadata", {}).get("alt")):
        if isinstance(alt, dict):
            alt = alt.get(lang) or alt.get("en")
        if alt:
            return str(alt).replace("]", ")").replace("[", "(").replace("\n", " ")
    return _("Chart: {title}", lang=lang, title=title)


def outputs(cell, resources) -> list[dict]:
    """A cell's outputs as page items: consecutive texts joined in one fence, images on their own."""
    items: list[dict] = []
    course = resources["course"]
    for out in cell.get("outputs", []):
        files = out.get("metadata", {}).get("filenames", {})
        if "image/png" in files:
            item = {
                "kind": "image",
                "src": files["image/png"],
                "dark": None,
                "alt": alt_text(cell, out, course["lang"], course["title"]),
            }
            if DARK_MIME in out.get("data", {}):  # a variant for dark pages (charts.show)
                item["dark"] = files["image/png"].replace(".png", "-dark.png")
                resources.setdefault("outputs", {})[item["dark"]] = base64.b64decode(out["data"][DARK_MIME])
            items.append(item)
            continue
        text = _text_of(out)
        if not text:
            continue
        text = text if text.endswith("\n") else text + "\n"
        if items and items[-1]["kind"] == "text":
            items[-1]["text"] += text
        else:
            items.append({"kind": "text", "text": text})
    return items


class CoursePageExporter(MarkdownExporter):
    """nbconvert's Markdown exporter with the course's page template and preprocessors."""

    export_from_notebook = "Course page"

    def __init__(self, **kw):
        super().__init__(extra_template_basedirs=[str(TEMPLATES)], template_name="course-page", **kw)
        self.register_preprocessor(HeadingIds, enabled=True)
        extract = ExtractOutputPreprocessor(
            enabled=True,
            extract_output_types={"image/png"},
            output_filename_template=IMAGE_DIR + "/cell{cell_index:03d}-{index}{extension}",
        )
        self.register_preprocessor(extract, enabled=True)
        self.register_filter("course_fence", fence)
        self.register_filter("course_outputs", outputs)
        self.register_filter("course_json", lambda v: json.dumps(v, ensure_ascii=False))

    @property
    def default_config(self):
        config = super().default_config
        config.merge({"ExtractOutputPreprocessor": {"enabled": False}})  # ours, with the course's file names
        return config


def title_of(nb: nbformat.NotebookNode) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return "Notebook"


def page_resources(nb: nbformat.NotebookNode, lesson: str, lang: str) -> dict:
    name = f"{lesson}.ipynb"
    backend = nb.metadata.get("course", {}).get("executed_on", "fakeredis")
    note = _(
        "This page is the notebook **{name}** executed on {backend}. [Download the notebook]({name}) "
        "and run it yourself: `python3 run.py jupyter --lang {code}`.",
        lang=lang,
        code=lang,
        name=name,
        backend=backend,
    )
    return {"course": {"lang": lang, "title": title_of(nb), "note": note, "output_title": _("Output", lang=lang)}}


def render(nb: nbformat.NotebookNode, lesson: str, lang: str) -> tuple[str, dict[str, bytes]]:
    """(page Markdown, {relative image path: PNG bytes}) for a stored notebook."""
    body, resources = CoursePageExporter().from_notebook_node(nb, resources=page_resources(nb, lesson, lang))
    return body, dict(resources.get("outputs", {}))


def write_page(lesson: str, lang: str) -> Path:
    """``docs/<lang>/<lesson>/notebook.md`` (+ images and the .ipynb to download) from the stored notebook."""
    nb = nbformat.read(ipynb_path(lesson, lang), as_version=4)
    body, images = render(nb, lesson, lang)
    out_dir = paths.DOCS / lang / lesson
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out_dir / IMAGE_DIR, ignore_errors=True)
    for rel, data in images.items():
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / rel).write_bytes(data)
    page = out_dir / "notebook.md"
    page.write_text(body, encoding="utf-8")
    shutil.copyfile(ipynb_path(lesson, lang), out_dir / f"{lesson}.ipynb")
    return page


def stale_sources(langs: Iterable[str] = LANGS) -> list[str]:
    """One sentence per stored notebook that is missing or older than its source (by the digest it records)."""
    from .execute import source_digest  # hashlib only: no kernel, no jupytext

    lines = []
    for src in sources():
        for lang in langs:
            path = ipynb_path(lesson_of(src), lang)
            if not path.exists():
                lines.append(_("{path} is missing: run `python3 run.py notebooks --execute`.", path=path.name))
                continue
            recorded = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("course", {})
            if recorded.get("source_sha256") != source_digest(src):
                lines.append(
                    _(
                        "{path} is older than notebooks/{src}: its page shows the old outputs until "
                        "`python3 run.py notebooks --execute` runs it again.",
                        path=f"{lang}/{path.name}",
                        src=src.name,
                    )
                )
    return lines


def render_pages(langs: Iterable[str] = LANGS, jobs: int = 2, log=print) -> list[Path]:
    """Render every stored notebook in every language into its page; executes nothing."""
    items = [(lesson_of(src), lang) for src in sources() for lang in langs if ipynb_path(lesson_of(src), lang).exists()]

    def one(item: tuple[str, str]) -> Path:
        page = write_page(*item)
        log(f"  notebook {item[1]}/{item[0]} rendered")
        return page

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, items))
