"""The console's third-party Python as .pyc, compiled once by the browser's own CPython (Pyodide in Node).

A first click then imports fakeredis and redis instead of compiling some 200 modules in the
browser.  Bytecode is only valid for the exact CPython that made it, so the browser's interpreter
makes it: ``node precompile.mjs`` loads the cached Pyodide and the wheels, compiles every module and
writes a zip of sourceless ``.pyc`` files plus the packages' metadata.  The zip is cached beside
the runtime, keyed by the runtime's and wheels' checksums, so a build compiles only when a pin changes.

Without Node (or when it fails) :func:`bundle` returns ``None`` and the console loads the wheels
themselves: slower on the first click, the same answers.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from ..l10n import _

SCRIPT = Path(__file__).with_name("precompile.mjs")
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
        log("[course] " + _("compiling the browser console's Python once with Node (kept in {folder})",
                            folder=out.parent))
    try:
        subprocess.run([node, str(SCRIPT), str(runtime), str(tmp), *map(str, wheels)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        tmp.unlink(missing_ok=True)
        return None
    tmp.chmod(0o644)
    os.replace(tmp, out)
    return out
