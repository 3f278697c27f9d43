"""The console's runtime in the built site: Pyodide from npm, three wheels from PyPI, the course's Python.

Everything is pinned by version and checksum, downloaded once into the course's cache by
:mod:`redis_course.downloads` (pooch: verified, written atomically; ``$COURSE_CACHE``, else
``~/.cache/redis-course``), the runtime unpacked beside it in ``console/``, and copied into
``site/console/`` by :func:`install`; the pages of every language share that copy.
File names carry a version or a content hash, so a host may let browsers cache them for ever.

* npm ``pyodide`` — CPython compiled to WebAssembly with its standard library (no packages);
* PyPI ``fakeredis``, ``redis``, ``sortedcontainers`` — pure-Python wheels, the versions the course
  locks, loaded by ``pyodide.loadPackage`` from the site itself (no micropip, no CDN);
* ``packages-<hash>.zip`` — those wheels compiled to ``.pyc`` by Pyodide itself when Node is at hand
  (:mod:`.precompile`; a first click then imports instead of compiling: bench/console_first_answer.py);
* ``course-<hash>.zip`` — :mod:`redis_course.core.transcripts` (the formatter the page tests use),
  :mod:`redis_course.core.compat` and :mod:`.session`, so the browser prints what the tests check;
* ``snapshot-<hash>-<n>.gz`` — Pyodide's memory once all of that is imported, made with Node too
  (:func:`.precompile.snapshot`): a click restores it instead of starting Python, and then needs
  neither the packages nor the course zip; the worker falls back on them when it cannot restore it.
  It is cut into parts of ``SNAPSHOT_PART`` bytes: Chromium keeps no file larger than an eighth of its
  cache in it, and a private window's cache (in memory) is 50 MB, so a 9 MB file would be downloaded
  again on every page;
* ``worker-<hash>.mjs`` — the Web Worker that runs them.

Without network (or with ``COURSE_CONSOLE=0``) :func:`prepare` returns ``None`` and one sentence, and
the site is built without consoles.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

from .. import downloads
from ..downloads import Artifact, Unavailable, cache_dir
from ..l10n import _

__all__ = ["Artifact", "Unavailable", "cache_dir", "fetch", "prepare", "install", "cached"]

PYODIDE_VERSION = "314.0.7"


# npm's dist.integrity of pyodide@314.0.7 (`npm view pyodide@314.0.7 dist.integrity`)
PYODIDE = Artifact(
    f"pyodide-{PYODIDE_VERSION}.tgz",
    f"https://registry.npmjs.org/pyodide/-/pyodide-{PYODIDE_VERSION}.tgz",
    "sha512",
    "0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A==",
)
# PyPI's sha256 of each wheel; the versions are requirements/all.txt's
WHEELS = (
    Artifact(
        "fakeredis-2.41.0-py3-none-any.whl",
        "https://files.pythonhosted.org/packages/3a/47/1a20be7813c4f079b478d9d2c54fcfc4178062a3acd028dd289cdced3904/"
        "fakeredis-2.41.0-py3-none-any.whl",
        "sha256",
        "9a2bb58889e8bf646b991324ac4d226a3ae74a3bdde7b6e533c7072c853f236e",
    ),
    Artifact(
        "redis-8.1.0-py3-none-any.whl",
        "https://files.pythonhosted.org/packages/66/9d/c5731f6e3608663d4d3656fd8d3aecee8b509c3082818f5a13eae925baea/"
        "redis-8.1.0-py3-none-any.whl",
        "sha256",
        "a4fe1aac3d3b3cc791d4b3d5931c5a956045dc951ee74d1c913ee3ac4d2ee9fb",
    ),
    Artifact(
        "sortedcontainers-2.4.0-py2.py3-none-any.whl",
        "https://files.pythonhosted.org/packages/32/46/9cb0e58b2deb7f82b84065f37f3bffeb12413f947f9388e4cac22c4621ce/"
        "sortedcontainers-2.4.0-py2.py3-none-any.whl",
        "sha256",
        "a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0",
    ),
)
# what the browser needs from the npm package (the rest is types, source maps and demo pages)
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
PACKAGE = Path(__file__).resolve().parents[1]  # src/redis_course
# the course's modules the browser runs (redis_course/__init__.py there is empty: it would import the world)
COURSE_MODULES = (
    "core/__init__.py",
    "core/compat.py",
    "core/transcripts.py",
    "webconsole/__init__.py",
    "webconsole/session.py",
)
WORKER = Path(__file__).with_name("worker.mjs")
SITE_FOLDER = "console"
SNAPSHOT_PART = 3_000_000  # bytes of one part of the snapshot (see above)


def fetch(artifact: Artifact, cache: Path | None = None, log=None) -> Path:
    """The verified file in the cache, downloaded first when missing or corrupt (``log``: one line then)."""

    def downloaded(path: Path) -> None:
        if log:
            log(
                "[course] "
                + _(
                    "downloaded {name} for the browser console ({mb:.1f} MB, kept in {folder})",
                    name=artifact.name,
                    mb=path.stat().st_size / 1e6,
                    folder=path.parent,
                )
            )

    return downloads.fetch(artifact, cache, downloaded)


def runtime_dir(cache: Path | None = None, log=None) -> Path:
    """The runtime files, unpacked from the verified npm tarball into the cache once."""
    tgz = fetch(PYODIDE, cache, log)
    out = (cache or cache_dir()) / "console" / tgz.name.removesuffix(".tgz")  # .../console/pyodide-314.0.7
    with downloads.lock(out):  # parallel builds: one unpacks, the others wait and find it
        return _unpack(tgz, out)


def _unpack(tgz: Path, out: Path) -> Path:
    stamp = out / ".from"
    if stamp.is_file() and stamp.read_text() == PYODIDE.digest and all((out / f).is_file() for f in RUNTIME_FILES):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".unpack-"))
    try:
        with tarfile.open(tgz) as tar:
            for name in RUNTIME_FILES:
                member = tar.getmember(f"package/{name}")
                src = tar.extractfile(member)
                if src is None:
                    raise Unavailable(_("{name} lacks {file}", name=PYODIDE.name, file=name))
                (tmp / name).write_bytes(src.read())
        (tmp / ".from").write_text(PYODIDE.digest)
        tmp.chmod(0o755)
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def cached(cache: Path | None = None) -> bool:
    """True when the runtime and every wheel are in the cache, verified (no network asked)."""
    return all(downloads.cached(a, cache) for a in (PYODIDE, *WHEELS))


def course_zip() -> bytes:
    """The course's Python for the browser, as a zip to unpack on its ``sys.path`` (deterministic bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:

        def add(name: str, data: bytes) -> None:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)

        add("redis_course/__init__.py", b'"""The course modules the browser console runs."""\n')
        for rel in COURSE_MODULES:
            add(f"redis_course/{rel}", (PACKAGE / rel).read_bytes())
    return buf.getvalue()


def _hashed(stem: str, data: bytes, suffix: str) -> str:
    return f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"


# what `serve` and static hosts send gzip-compressed (site.COMPRESSIBLE); zips and wheels go as they are
COMPRESSED_IN_TRANSIT = {".mjs", ".js", ".wasm", ".json"}


def transfer_size(name: str, data: bytes) -> int:
    """The bytes a browser downloads for one file: gzip-compressed (level 6, as `serve`) when it is sent so."""
    if Path(name).suffix not in COMPRESSED_IN_TRANSIT:
        return len(data)
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    return len(packer.compress(data)) + len(packer.flush())


def snapshot_parts(data: bytes) -> list[str]:
    """The names of the snapshot's parts, in order (the worker joins them, then unpacks them)."""
    stem = _hashed("snapshot", data, "")
    return [f"{stem}-{k}.gz" for k in range(max(1, -(-len(data) // SNAPSHOT_PART)))]


def manifest(runtime: Path, wheels: list[Path], packages: Path | None = None, snapshot: Path | None = None) -> dict:
    """What the pages need to know: file names under ``console/`` and the bytes a first click loads.
    ``packages`` is the precompiled bundle (:mod:`.precompile`), shipped instead of the wheels;
    ``snapshot`` the memory snapshot made from it, which a click loads instead of the bundle and the
    course zip (they stay on the site for a browser that cannot restore it)."""
    worker = WORKER.read_bytes()
    course = course_zip()
    shipped = [packages] if packages else wheels
    runtime_files = [runtime / f for f in RUNTIME_FILES]
    snapshot_data = snapshot.read_bytes() if snapshot else b""
    # what a first click fetches: the runtime, the worker, then the snapshot or the packages and course
    fetched = [(p.name, p.read_bytes()) for p in runtime_files] + [("worker.mjs", worker)]
    if snapshot:
        fetched.append((snapshot.name, snapshot_data))
    else:
        fetched += [(p.name, p.read_bytes()) for p in shipped] + [("course.zip", course)]
    return {
        "folder": SITE_FOLDER + "/",
        "pyodide": f"pyodide-{PYODIDE_VERSION}/",
        "wheels": [] if packages else [f"wheels/{p.name}" for p in wheels],
        "packages": f"wheels/{packages.name}" if packages else None,
        "course": _hashed("course", course, ".zip"),
        "worker": _hashed("worker", worker, ".mjs"),
        "snapshot": snapshot_parts(snapshot_data) if snapshot else None,
        "snapshot_bytes": len(snapshot_data),  # what the status line counts up to while it loads
        "bytes": sum(len(data) for _name, data in fetched),
        "transfer": sum(transfer_size(name, data) for name, data in fetched),  # what crosses the network
        "_runtime": str(runtime),
        "_shipped": [str(p) for p in shipped],
        "_snapshot": str(snapshot) if snapshot else None,
    }


def prepare(log=print, cache: Path | None = None) -> dict | None:
    """The console's manifest with every file verified in the cache, or ``None`` (and one line logged)."""
    if os.environ.get("COURSE_CONSOLE", "1") == "0":
        log("[course] " + _("building the site without in-browser consoles (COURSE_CONSOLE=0)"))
        return None
    try:
        runtime = runtime_dir(cache, log)
        wheels = [fetch(w, cache, log) for w in WHEELS]
    except (Unavailable, OSError, tarfile.TarError, KeyError) as exc:
        log("[course] " + _("building the site without in-browser consoles: {reason}", reason=exc))
        return None
    from . import precompile

    with downloads.lock(runtime.parent / "precompiled"):  # parallel builds would write the same .part files
        packages = precompile.bundle(runtime, wheels, PYODIDE.digest, log)
        snapshot = precompile.snapshot(runtime, packages, course_zip(), PYODIDE.digest, log)
    return manifest(runtime, wheels, packages, snapshot)


def install(site_root: Path, info: dict) -> Path:
    """Copy the runtime, wheels, course zip, snapshot and worker into ``site_root/console/``."""
    out = Path(site_root) / SITE_FOLDER
    shutil.rmtree(out, ignore_errors=True)
    (out / info["pyodide"]).mkdir(parents=True)
    (out / "wheels").mkdir()
    for name in RUNTIME_FILES:
        shutil.copyfile(Path(info["_runtime"]) / name, out / info["pyodide"] / name)
    for wheel in info["_shipped"]:
        shutil.copyfile(wheel, out / "wheels" / Path(wheel).name)
    (out / info["course"]).write_bytes(course_zip())
    shutil.copyfile(WORKER, out / info["worker"])
    if info.get("snapshot"):
        data = Path(info["_snapshot"]).read_bytes()
        for k, name in enumerate(info["snapshot"]):
            (out / name).write_bytes(data[k * SNAPSHOT_PART : (k + 1) * SNAPSHOT_PART])
    return out
