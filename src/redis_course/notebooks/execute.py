"""Running notebooks, and the executed notebooks stored in git.

``notebooks/<lang>/NN-topic.ipynb`` are stored executed on fakeredis (what a student gets without
``REDIS_URL``), so a reader sees every result before running anything and the site is rendered from
them without executing a cell.  Each records ``metadata.course.outputs_key``: a digest of everything
that changes its outputs (:func:`outputs_key`); ``python3 run.py notebooks`` re-executes the notebooks
whose key or cells no longer match, and nothing else.
"""

from __future__ import annotations

import asyncio
import atexit
import copy
import hashlib
import importlib.metadata
import os
import secrets
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from .. import paths
from ..paths import LANGS
from .localize import ipynb_path, lesson_of, sources, student_notebook

CELL_TIMEOUT = 300
STORED_PREFIX = "course:nb:"  # fakeredis runs in the kernel: a fixed prefix keeps stored outputs stable
PKG = Path(__file__).resolve().parents[1]
#: The course code a notebook's outputs depend on (besides its own source): the backend, the lessons and
#: what draws their charts and tables.
OUTPUT_CODE = (
    "__init__.py",
    "core/backend.py",
    "core/compat.py",
    "core/servers.py",
    "l10n/*.py",
    "paths.py",
    "charts.py",
    "tables.py",
    "fonts/*.otf",
    "cluster/*.py",
    "lessons/**/*.py",
)
#: Installed packages whose versions change outputs.
OUTPUT_PACKAGES = ("redis", "fakeredis", "lupa")


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


def execute(
    nb: nbformat.NotebookNode,
    *,
    redis_url: str | None = None,
    lang: str = "en",
    prefix: str | None = None,
    cwd: Path | None = None,
    timeout: int = CELL_TIMEOUT,
) -> nbformat.NotebookNode:
    """Run every cell in a fresh Python kernel; return the executed copy.

    ``redis_url=None`` runs on fakeredis; otherwise the kernel gets ``REDIS_URL``.  A cell that raises
    fails the run (unless tagged ``raises-exception``): ``nbclient.exceptions.CellExecutionError``.
    """
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    source = nb
    # Always choose the run's key prefix here, so the keys can be removed even if the kernel dies.
    prefix = prefix or f"course:nb{secrets.token_hex(3)}:"
    env = kernel_env(redis_url, lang, prefix)
    for attempt in (1, 2):
        nb = copy.deepcopy(source)
        ipc_dir = tempfile.mkdtemp(prefix="course-kernel-")  # the kernel talks over Unix sockets, not TCP
        log_path = os.path.join(ipc_dir, "kernel.log")
        km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(ipc_dir, "k"))
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            km=km,
            record_timing=False,
            resources={"metadata": {"path": str(cwd or paths.NOTEBOOKS)}},
        )

        async def run() -> None:
            with open(log_path, "wb") as log:  # what the kernel prints before it can reply: why it died
                try:
                    await client.async_execute(env=env, stderr=log)
                finally:
                    if await km.is_alive():
                        await km.shutdown_kernel(now=True)

        try:
            asyncio.run(run())
            break
        except RuntimeError as exc:
            # a kernel that died before it answered ran no cell: start another once (a machine under
            # heavy load can lose one); the second time, say what the kernel printed
            if "before replying to kernel_info" not in str(exc):
                raise
            if attempt == 2:
                with open(log_path, "rb") as log:
                    tail = log.read()[-1500:].decode("utf-8", "replace").strip()
                raise RuntimeError(f"{exc} (twice); the kernel printed: {tail or 'nothing'}") from None
        finally:
            # nbclient leaves its exit hook registered when the kernel died before it answered; at exit
            # it would find no kernel manager and print a traceback
            atexit.unregister(client._cleanup_kernel)
            shutil.rmtree(ipc_dir, ignore_errors=True)
            if redis_url:  # the kernel is stopped without running atexit: delete this run's keys here
                from ..core.backend import connect

                connect(redis_url, prefix=prefix).cleanup()
    nb.metadata.setdefault("course", {})["executed_on"] = executed_on(redis_url)
    return nb


def executed_on(redis_url: str | None) -> str:
    """``fakeredis 2.41.0`` or ``Redis 7.0.15``: asked of the backend, not read from a notebook's output."""
    if not redis_url:
        return f"fakeredis {_version('fakeredis')}"
    from ..core.backend import connect

    return f"Redis {connect(redis_url, prefix='course:probe:').server_version()}"


# ------------------------------------------------------------------ what changes outputs


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def source_digest(src: Path) -> str:
    """Digest of a notebook's source file alone: ``build`` compares it without jupytext installed."""
    return hashlib.sha256(src.read_bytes()).hexdigest()[:16]


def output_inputs(src: Path, lang: str) -> list[Path]:
    """The files whose content :func:`outputs_key` digests for ``src`` in ``lang``."""
    return [src] + sorted({p for pattern in OUTPUT_CODE for p in PKG.glob(pattern)})


def outputs_key(src: Path, lang: str) -> str:
    """Digest of what changes a notebook's outputs: its source, the course's backend and lesson code,
    and the installed versions of redis-py, fakeredis and lupa.  Nothing else: editing the grader, the
    site or a catalog leaves every stored notebook valid (a translated message that changes an output
    is caught by the regression test, which re-executes every stored notebook)."""
    h = hashlib.sha256(lang.encode())
    for f in output_inputs(src, lang):
        name = f.name if f == src else f.relative_to(PKG).as_posix()
        h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    for package in OUTPUT_PACKAGES:
        h.update(f"{package}=={_version(package)}\0".encode())
    return h.hexdigest()[:20]


# ------------------------------------------------------------------ the stored notebooks

STORED_ONLY = ("executed_on", "outputs_key", "source_sha256")  # metadata the source does not generate


def without_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The cells (source, metadata) of ``nb`` as the source would generate them: no outputs, no counts."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    nb.metadata["language_info"] = {"name": "python"}
    course = nb.metadata.get("course", {})
    nb.metadata["course"] = {k: v for k, v in course.items() if k not in STORED_ONLY}
    return nb


def dumps(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def state(src: Path, lang: str) -> str:
    """``fresh``, ``missing``, ``cells`` (the source changed) or ``outputs`` (code or versions changed)."""
    path = ipynb_path(lesson_of(src), lang)
    if not path.exists():
        return "missing"
    stored = nbformat.read(path, as_version=4)
    if dumps(without_outputs(stored)) != dumps(student_notebook(src, lang)):
        return "cells"
    if stored.metadata.get("course", {}).get("outputs_key") != outputs_key(src, lang):
        return "outputs"
    return "fresh"


def stale(langs=LANGS) -> dict[Path, str]:
    """{stored notebook: why} for every notebook that does not match its source, code or versions,
    and every stored notebook whose source is gone (``orphan``)."""
    found = {}
    for src in sources():
        for lang in langs:
            why = state(src, lang)
            if why != "fresh":
                found[ipynb_path(lesson_of(src), lang)] = why
    wanted = {ipynb_path(lesson_of(src), lang) for src in sources() for lang in langs}
    for lang in langs:
        for path in sorted((paths.NOTEBOOKS / lang).glob("*.ipynb")):
            if path not in wanted:
                found[path] = "orphan"
    return found


def coalesce_streams(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """One stdout and one stderr output per cell, as pytest-notebook's regression check writes them
    (how a kernel splits a stream into messages depends on timing, not on the notebook)."""
    from pytest_notebook.post_processors import coalesce_streams as per_cell

    nb, _ = per_cell(nb, {})
    return nb


def store(src: Path, lang: str) -> Path:
    """Execute the notebook for ``lang`` on fakeredis and write it, outputs included."""
    nb = coalesce_streams(execute(student_notebook(src, lang), lang=lang, prefix=STORED_PREFIX))
    nb.metadata["language_info"] = {"name": "python"}  # not the Python version of the machine that ran it
    nb.metadata["course"]["outputs_key"] = outputs_key(src, lang)
    nb.metadata["course"]["source_sha256"] = source_digest(src)
    path = ipynb_path(lesson_of(src), lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(nb), encoding="utf-8")
    return path


def _shown(path: Path) -> str:
    return str(path.relative_to(paths.ROOT)) if path.is_relative_to(paths.ROOT) else str(path)


def regenerate(force: bool = False, langs=LANGS, jobs: int = 2, log=print) -> list[Path]:
    """Re-execute and store the stale notebooks (all of them with ``force``); remove orphans."""
    todo = (
        stale(langs) if not force else {ipynb_path(lesson_of(s), lang): "forced" for s in sources() for lang in langs}
    )
    by_path = {ipynb_path(lesson_of(s), lang): (s, lang) for s in sources() for lang in langs}
    for path, why in list(todo.items()):
        if why == "orphan":
            path.unlink()
            log(f"  removed {_shown(path)} (its source is gone)")
            del todo[path]

    def one(path: Path) -> Path:
        store(*by_path[path])
        log(f"  executed {_shown(path)} ({todo[path]})")
        return path

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, sorted(todo)))
