"""Notebooks: one source, three languages, two backends, one rendered page per language.

Source: ``notebooks/NN-topic.py`` in jupytext ``py:percent`` format.  Code cells are written once;
markdown cells carry ``lang="en"``, ``lang="ru"`` or ``lang="zh"`` (a markdown cell without ``lang``
is shown in every language).  Cell tags:

* ``varies`` — the output depends on the machine, the time or the backend's name; compared runs mask it;
* ``backend-differs`` — Redis and fakeredis really answer differently here; the lesson says so, and
  the comparison *requires* the outputs to differ (so the pin fails if the difference goes away);
* ``raises-exception`` — the cell is meant to raise (nbclient's own tag).

From the source we generate ``notebooks/<lang>/NN-topic.ipynb`` (no outputs; students open these)
and, at build time, an executed copy rendered to ``docs/<lang>/NN-topic/notebook.md``.
"""
from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import json
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

import jupytext
import nbformat
from nbclient import NotebookClient

from . import paths
from .paths import LANGS

MASK_TAG = "varies"
DIFFERS_TAG = "backend-differs"
CELL_TIMEOUT = 300
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

OUTPUT_TITLE = {"en": "Output", "ru": "Вывод", "zh": "输出"}
PAGE_NOTE = {
    "en": "This page is the notebook **{name}** executed on {backend}. "
          "[Download the notebook]({name}) and run it yourself: `python3 run.py jupyter --lang en`.",
    "ru": "Это блокнот **{name}**, выполненный на {backend}. "
          "[Скачайте блокнот]({name}) и запустите его сами: `python3 run.py jupyter --lang ru`.",
    "zh": "本页是笔记本 **{name}** 在 {backend} 上的运行结果。"
          "[下载笔记本]({name})，亲自运行一遍：`python3 run.py jupyter --lang zh`。",
}


def sources() -> list[Path]:
    return sorted(paths.NOTEBOOKS.glob("[0-9][0-9]-*.py"))


def lesson_of(src: Path) -> str:
    return src.stem


def load(src: Path) -> nbformat.NotebookNode:
    return jupytext.read(src)


def localize(nb: nbformat.NotebookNode, lang: str) -> nbformat.NotebookNode:
    """The notebook a reader of ``lang`` opens: its markdown cells, every code cell, no outputs."""
    out = nbformat.v4.new_notebook()
    out.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "course": {"lang": lang, "generated_from": f"notebooks/{nb.metadata.get('course_source', '')}"},
    }
    for cell in nb.cells:
        cell_lang = cell.metadata.get("lang")
        if cell.cell_type == "markdown" and cell_lang not in (None, lang):
            continue
        meta = {k: v for k, v in cell.metadata.items() if k != "lang"}
        if cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source, metadata=meta)
        else:
            new = nbformat.v4.new_code_cell(cell.source, metadata=meta)
        out.cells.append(new)
    # stable ids, so regenerating an unchanged source gives byte-identical files
    for i, cell in enumerate(out.cells):
        cell.id = f"c{i:03d}"
    return out


def student_notebook(src: Path, lang: str) -> nbformat.NotebookNode:
    nb = load(src)
    nb.metadata["course_source"] = src.name
    return localize(nb, lang)


def ipynb_path(lesson: str, lang: str) -> Path:
    return paths.NOTEBOOKS / lang / f"{lesson}.ipynb"


def _dumps(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def sync(check: bool = False) -> list[Path]:
    """Write ``notebooks/<lang>/*.ipynb`` from the sources; return the files that were stale.

    With ``check=True`` nothing is written (a test uses this to fail on stale notebooks).
    """
    stale: list[Path] = []
    wanted: set[Path] = set()
    for src in sources():
        for lang in LANGS:
            path = ipynb_path(lesson_of(src), lang)
            wanted.add(path)
            text = _dumps(student_notebook(src, lang))
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
                if not check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
    for lang in LANGS:
        for path in (paths.NOTEBOOKS / lang).glob("*.ipynb"):
            if path not in wanted:
                stale.append(path)
                if not check:
                    path.unlink()
    return stale


# ---------------------------------------------------------------- execution

def kernel_env(redis_url: str | None, lang: str, prefix: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env["COURSE_LANG"] = lang
    env["MPLBACKEND"] = "Agg"
    env["PYTHONHASHSEED"] = "0"
    env.pop("COURSE_KEY_PREFIX", None)
    if prefix:
        env["COURSE_KEY_PREFIX"] = prefix
    return env


def execute(nb: nbformat.NotebookNode, *, redis_url: str | None = None, lang: str = "en",
            prefix: str | None = None, cwd: Path | None = None,
            timeout: int = CELL_TIMEOUT) -> nbformat.NotebookNode:
    """Run every cell in a fresh Python kernel; return the executed copy.

    ``redis_url=None`` runs on fakeredis; otherwise the kernel gets ``REDIS_URL``.  A cell that raises
    fails the run (unless tagged ``raises-exception``): ``nbclient.exceptions.CellExecutionError``.
    """
    import secrets
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    nb = copy.deepcopy(nb)
    # Always choose the run's key prefix here, so the keys can be removed even if the kernel dies.
    prefix = prefix or f"course:nb{secrets.token_hex(3)}:"

    # IPC transport: the kernel talks over Unix sockets in a private folder, not over TCP.
    ipc_dir = tempfile.mkdtemp(prefix="course-kernel-")
    km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(ipc_dir, "k"))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", km=km,
                            resources={"metadata": {"path": str(cwd or paths.NOTEBOOKS)}})
    env = kernel_env(redis_url, lang, prefix)
    async def run() -> None:
        try:
            await client.async_execute(env=env)
        finally:
            if await km.is_alive():
                await km.shutdown_kernel(now=True)

    try:
        asyncio.run(run())
    finally:
        shutil.rmtree(ipc_dir, ignore_errors=True)
        if redis_url:  # the kernel is stopped without running atexit: delete this run's keys here
            from .backend import connect

            connect(redis_url, prefix=prefix).cleanup()
    nb.metadata.setdefault("course", {})["executed_on"] = _backend_line(nb)
    return nb


def _backend_line(nb: nbformat.NotebookNode) -> str:
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            if isinstance(text, str) and text.startswith("backend: "):
                return text.splitlines()[0][len("backend: "):].split(";")[0].split(", key prefix")[0]
    return "fakeredis"


def _output_text(out: dict) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return _ANSI.sub("", out.get("text", ""))
    if kind in ("execute_result", "display_data"):
        data = out.get("data", {})
        if "image/png" in data:
            return "<image>"
        return _ANSI.sub("", str(data.get("text/plain", "")))
    if kind == "error":
        return f"{out.get('ename')}: {_ANSI.sub('', out.get('evalue', ''))}"
    return ""


def comparable(nb: nbformat.NotebookNode, prefix: str | None = None) -> list[dict]:
    """Per code cell: index, tags, source head and the normalised text of its outputs."""
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        text = "".join(_output_text(o) for o in cell.get("outputs", []))
        if prefix:
            text = text.replace(prefix, "<prefix>")
        cells.append({"index": i, "tags": list(cell.metadata.get("tags", [])),
                      "source": cell.source.splitlines()[0] if cell.source else "", "output": text})
    return cells


def compare_backends(fake: nbformat.NotebookNode, real: nbformat.NotebookNode,
                     prefix_fake: str, prefix_real: str) -> list[str]:
    """Differences between the two runs that the lesson does not declare; [] when they agree."""
    problems = []
    for a, b in zip(comparable(fake, prefix_fake), comparable(real, prefix_real)):
        if MASK_TAG in a["tags"]:
            continue
        same = a["output"] == b["output"]
        if DIFFERS_TAG in a["tags"]:
            if same:
                problems.append(f"cell {a['index']} ({a['source']!r}) is tagged {DIFFERS_TAG} but both "
                                f"backends now print the same; update the lesson and remove the tag")
        elif not same:
            problems.append(f"cell {a['index']} ({a['source']!r}) differs:\n  fakeredis: {a['output']!r}\n"
                            f"  redis:     {b['output']!r}")
    return problems


# ---------------------------------------------------------------- rendering

def _fence(text: str, lang: str, title: str | None = None) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    head = f'{ticks}{lang}' + (f' title="{title}"' if title else "")
    return f"{head}\n{text.rstrip()}\n{ticks}\n"


def render_markdown(nb: nbformat.NotebookNode, lesson: str, lang: str, out_dir: Path) -> str:
    """Markdown for mkdocs from an executed notebook; images are written beside it."""
    img_dir = out_dir / "notebook_files"
    name = f"{lesson}.ipynb"
    backend = nb.metadata.get("course", {}).get("executed_on", "fakeredis")
    parts = ['<div class="course-notebook" markdown>\n',
             f'!!! info ""\n    {PAGE_NOTE[lang].format(name=name, backend=backend)}\n']
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            parts.append(cell.source.strip() + "\n")
            continue
        if cell.source.strip():
            parts.append(_fence(cell.source, "python"))
        texts: list[str] = []
        for j, out in enumerate(cell.get("outputs", [])):
            data = out.get("data", {})
            if "image/png" in data:
                if texts:
                    parts.append(_fence("".join(texts), "text", OUTPUT_TITLE[lang]))
                    texts = []
                img_dir.mkdir(parents=True, exist_ok=True)
                parts.append(_image(out, img_dir, f"cell{i:03d}-{j}"))
            else:
                t = _output_text(out)
                if t:
                    texts.append(t if t.endswith("\n") else t + "\n")
        if texts:
            parts.append(_fence("".join(texts), "text", OUTPUT_TITLE[lang]))
    parts.append("</div>\n")
    return "\n".join(parts)


def _image(out: dict, img_dir: Path, stem: str) -> str:
    """Markdown for an image output: its alt text from the output's metadata (``course.alt``) and,
    when :func:`redis_course.charts.show` added one, a dark variant shown only in dark mode."""
    from .charts import DARK_MIME

    data = out.get("data", {})
    alt = str(out.get("metadata", {}).get("course", {}).get("alt", "")).replace("\n", " ")
    alt = alt.replace("[", "(").replace("]", ")")
    (img_dir / f"{stem}.png").write_bytes(base64.b64decode(data["image/png"]))
    if DARK_MIME not in data:
        return f"![{alt}](notebook_files/{stem}.png)\n"
    (img_dir / f"{stem}-dark.png").write_bytes(base64.b64decode(data[DARK_MIME]))
    return (f"![{alt}](notebook_files/{stem}.png#only-light)"
            f"![{alt}](notebook_files/{stem}-dark.png#only-dark)\n")


def _title(nb: nbformat.NotebookNode) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return "Notebook"


def _cache_key(src: Path, lang: str, redis_url: str | None) -> str:
    h = hashlib.sha256(src.read_bytes())
    h.update(lang.encode())
    h.update(b"real" if redis_url else b"fake")
    pkg = Path(__file__).parent
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def executed(src: Path, lang: str, redis_url: str | None = None) -> nbformat.NotebookNode:
    """The executed notebook for ``lang``, from build/ when the source has not changed since."""
    cache = paths.BUILD / "notebooks" / lang / f"{lesson_of(src)}.{_cache_key(src, lang, redis_url)}.ipynb"
    if cache.exists():
        return nbformat.read(cache, as_version=4)
    nb = execute(student_notebook(src, lang), redis_url=redis_url, lang=lang)
    cache.parent.mkdir(parents=True, exist_ok=True)
    for old in cache.parent.glob(f"{lesson_of(src)}.*.ipynb"):
        old.unlink()
    nbformat.write(nb, cache)
    return nb


def render_pages(langs: Iterable[str] = LANGS, redis_url: str | None = None, jobs: int = 2,
                 log=print) -> list[Path]:
    """Execute every notebook in every language and write ``docs/<lang>/<lesson>/notebook.md``."""
    jobs_list = [(src, lang) for src in sources() for lang in langs]
    written: list[Path] = []

    def one(item: tuple[Path, str]) -> Path:
        src, lang = item
        lesson = lesson_of(src)
        out_dir = paths.DOCS / lang / lesson
        nb = executed(src, lang, redis_url)
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(out_dir / "notebook_files", ignore_errors=True)
        page = out_dir / "notebook.md"
        page.write_text(f"---\ntitle: {json.dumps(_title(nb), ensure_ascii=False)}\n---\n\n"
                        + render_markdown(nb, lesson, lang, out_dir), encoding="utf-8")
        shutil.copyfile(ipynb_path(lesson, lang), out_dir / f"{lesson}.ipynb")
        log(f"  notebook {lang}/{lesson} rendered")
        return page

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        written = list(pool.map(one, jobs_list))
    return written
