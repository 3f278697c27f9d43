"""One file out of a pinned npm package, for the tests and benchmarks (never for the site itself).

``npm_file("axe-core", "4.14.1", "axe.min.js", integrity=...)`` downloads the package's tarball from
the npm registry once, checks it against the registry's ``sha512-...`` integrity string written in the
caller's code (a changed or truncated download is refused), and keeps the file under
``~/.cache/redis-course/npm/<name>-<version>/`` (``COURSE_CACHE`` moves it).  Later calls read the
cache and check its digest again.  One HTTP GET, then a gzip tar read in memory: O(size of the package).
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import urllib.request
from pathlib import Path

REGISTRY = "https://registry.npmjs.org"


class NpmFileError(RuntimeError):
    pass


def cache_dir() -> Path:
    base = os.environ.get("COURSE_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                          os.path.expanduser("~/.cache"), "redis-course")
    return Path(base) / "npm"


def _check(data: bytes, integrity: str, what: str) -> None:
    algo, _, want = integrity.partition("-")
    if algo not in ("sha512", "sha384", "sha256"):
        raise NpmFileError(f"unsupported integrity {integrity!r} for {what}")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise NpmFileError(f"{what}: checksum mismatch ({algo}-{got} instead of {integrity})")


def npm_file(name: str, version: str, member: str, integrity: str, timeout: float = 60.0) -> Path:
    """The path of ``member`` (relative to the package folder) of ``name@version``, cached and verified."""
    folder = cache_dir() / f"{name.replace('/', '+')}-{version}"
    tarball = folder / "package.tgz"
    target = folder / member
    if target.is_file() and tarball.is_file():
        _check(tarball.read_bytes(), integrity, f"{name}@{version} (cached)")
        return target
    url = f"{REGISTRY}/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            data = resp.read()
    except OSError as exc:
        raise NpmFileError(f"cannot download {name}@{version} from {url}: {exc}") from None
    _check(data, integrity, f"{name}@{version}")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        try:
            content = tar.extractfile(f"package/{member}")
        except KeyError:
            content = None
        if content is None:
            raise NpmFileError(f"{name}@{version} has no file {member}")
        body = content.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(body)
    tarball.write_bytes(data)  # last: its presence marks a complete cache entry
    return target
