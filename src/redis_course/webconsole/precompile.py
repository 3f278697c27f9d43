"""The console's Python made ready once by the browser's own CPython (Pyodide in Node): .pyc, then a snapshot.

A first click then imports fakeredis and redis instead of compiling some 200 modules in the
browser.  Bytecode is only valid for the exact CPython that made it, so the browser's interpreter
makes it: ``node precompile.mjs`` loads the cached Pyodide and the wheels, compiles every module and
writes a zip of sourceless ``.pyc`` files plus the packages' metadata.  The zip is cached beside
the runtime, keyed by the runtime's and wheels' checksums, so a build compiles only when a pin changes.

Without Node (or when it fails) :func:`bundle` returns ``None`` and the console loads the wheels
themselves: slower on the first click, the same answers.

:func:`snapshot` goes one step further: ``node snapshot.mjs`` imports that bundle and the course's
modules, runs a session, and saves Pyodide's memory as it is then (a memory snapshot, gzip-compressed,
about 9 MB).  The browser restores it instead of starting Python and importing fakeredis: a click on
a page after the first answers in about a second (bench/console_first_answer.py).  The script checks
that a restored snapshot answers a list of commands as a fresh start does; when it does not, or
without Node, :func:`snapshot` returns ``None`` and the console starts Python from the bundle.  The
snapshot is cached beside the runtime, keyed by the runtime, the script, the bundle and the course's
Python, so a build makes it again only when one of them changes (about 20 s of a busy machine).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..l10n import _

SCRIPT = Path(__file__).with_name("precompile.mjs")
SNAPSHOT_SCRIPT = Path(__file__).with_name("snapshot.mjs")
TIMEOUT = 600  # seconds; about 7 s of CPU, much longer on a busy machine


def key(runtime_digest: str, wheels: list[Path]) -> str:
    h = hashlib.sha256(runtime_digest.encode() + SCRIPT.read_bytes())
    for wheel in wheels:
        h.update(wheel.name.encode())
    return h.hexdigest()[:12]


def bundle(runtime: Path, wheels: list[Path], runtime_digest: str, log=None) -> Path | None:
    """The cached ``packages-<key>.zip`` next to ``runtime``, made now if missing; ``None`` without Node."""
    out = runtime.parent / f"packages-{key(runtime_digest, wheels)}.zip"
    if out.is_file():
        return out
    node = shutil.which("node")
    if not node:
        return None
    tmp = out.with_suffix(".part")
    if log:
        log(
            "[course] "
            + _("compiling the browser console's Python once with Node (kept in {folder})", folder=out.parent)
        )
    try:
        subprocess.run(
            [node, str(SCRIPT), str(runtime), str(tmp), *map(str, wheels)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        tmp.unlink(missing_ok=True)
        return None
    tmp.chmod(0o644)
    os.replace(tmp, out)
    return out


def snapshot_key(runtime_digest: str, packages: Path, course: bytes) -> str:
    h = hashlib.sha256(runtime_digest.encode() + SNAPSHOT_SCRIPT.read_bytes())
    h.update(hashlib.sha256(packages.read_bytes()).digest())
    h.update(hashlib.sha256(course).digest())
    return h.hexdigest()[:12]


def snapshot(runtime: Path, packages: Path | None, course: bytes, runtime_digest: str, log=None) -> Path | None:
    """The cached ``snapshot-<key>.gz`` next to ``runtime``, made now if missing; ``None`` without Node or
    the precompiled ``packages``, or when the snapshot does not answer as a fresh start (one line logged)."""
    if packages is None:
        return None
    out = runtime.parent / f"snapshot-{snapshot_key(runtime_digest, packages, course)}.gz"
    if out.is_file():
        return out
    node = shutil.which("node")
    if not node:
        return None
    if log:
        log(
            "[course] "
            + _(
                "making a snapshot of the browser console's Python once with Node (kept in {folder})", folder=out.parent
            )
        )
    tmp = out.with_suffix(".part")
    with tempfile.TemporaryDirectory(prefix="course-snapshot-") as work:
        course_zip = Path(work) / "course.zip"
        course_zip.write_bytes(course)
        try:
            subprocess.run(
                [node, str(SNAPSHOT_SCRIPT), str(runtime), str(packages), str(course_zip), str(tmp)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=TIMEOUT,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            tmp.unlink(missing_ok=True)
            if log:
                detail = (getattr(exc, "stderr", None) or b"").decode(errors="replace").strip().splitlines()
                log(
                    "[course] "
                    + _(
                        "the browser console starts without a snapshot: {reason}",
                        reason=(detail[-1] if detail else str(exc))[:300],
                    )
                )
            return None
    tmp.chmod(0o644)
    os.replace(tmp, out)
    return out
