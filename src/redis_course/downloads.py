"""Pinned files from a registry: downloaded once, checked against their hash, kept in the course's cache.

One cache folder for the whole course: ``$COURSE_CACHE``, else pooch's ``os_cache("redis-course")``
(platformdirs: ``$XDG_CACHE_HOME/redis-course``, else ``~/.cache/redis-course`` on Linux).  Every
downloaded file sits as the registry serves it in its ``downloads/`` folder; what is made from one
(the console's unpacked runtime, a file taken out of an npm tarball) goes into a folder of its own
beside it.

:func:`fetch` is pooch's ``retrieve``: a file already there with the pinned hash is used as it is (no
network), a missing or changed one is downloaded into a temporary file of the same folder, checked,
then moved into place, so a broken download never looks complete.  A file lock per file lets
parallel builds and test workers (pytest-xdist) share the folder: one downloads, the others wait
and then find it.  Without network, :class:`Unavailable` says so in one sentence.
"""

from __future__ import annotations

import base64
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .l10n import _

APP = "redis-course"
TIMEOUT = 30  # seconds without a byte before a download is given up
LEGACY = ("console", "npm")  # where earlier versions kept their downloads: adopted instead of downloaded again


class Unavailable(RuntimeError):
    """A pinned file cannot be had: no network, or the registry sent something else than the pin."""


def cache_dir() -> Path:
    """The course's one cache folder."""
    if os.environ.get("COURSE_CACHE"):
        return Path(os.environ["COURSE_CACHE"])
    import pooch

    return Path(pooch.os_cache(APP))


@dataclass(frozen=True)
class Artifact:
    """One file from a registry: its name in the cache, its address, its checksum (``algo``, hex or base64,
    as the registry publishes it: PyPI's sha256 in hex, npm's ``dist.integrity`` in base64)."""

    name: str
    url: str
    algo: str
    digest: str

    @property
    def known_hash(self) -> str:
        """The checksum as pooch takes it: ``algo:hex``."""
        import hashlib

        digest = self.digest
        if len(digest) != 2 * hashlib.new(self.algo).digest_size or not _is_hex(digest):
            digest = base64.b64decode(digest).hex()
        return f"{self.algo}:{digest.lower()}"

    def matches(self, data: bytes) -> bool:
        import hashlib

        return f"{self.algo}:{hashlib.new(self.algo, data).hexdigest()}" == self.known_hash

    def path(self, cache: Path | None = None) -> Path:
        return (cache or cache_dir()) / "downloads" / self.name


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


def npm_artifact(name: str, version: str, integrity: str) -> Artifact:
    """An npm package's tarball with its ``dist.integrity`` (``sha512-<base64>``)."""
    algo, _sep, digest = integrity.partition("-")
    if algo not in ("sha512", "sha384", "sha256"):
        raise Unavailable(f"unsupported integrity {integrity!r} for {name}@{version}")
    return Artifact(
        f"{name.replace('/', '+')}-{version}.tgz",
        f"https://registry.npmjs.org/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz",
        algo,
        digest,
    )


def cached(artifact: Artifact, cache: Path | None = None) -> bool:
    """True when the file is in the cache with its pinned hash (no network asked)."""
    import pooch

    path = artifact.path(cache)
    return path.is_file() and pooch.file_hash(str(path), artifact.algo) == artifact.known_hash.partition(":")[2]


def lock(path: Path):
    """A lock beside ``path`` (a file or a folder) shared by every process that uses the same cache."""
    import contextlib

    from filelock import FileLock

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return contextlib.nullcontext()
    if not os.access(path.parent, os.W_OK):  # a read-only cache: nothing to write, so nothing to guard
        return contextlib.nullcontext()
    return FileLock(str(path.parent / f".{path.name}.lock"))


def _adopt(artifact: Artifact, cache: Path | None) -> None:
    """Link a file an earlier version downloaded into ``downloads/`` (pooch checks its hash next)."""
    target = artifact.path(cache)
    if target.exists():
        return
    root = cache or cache_dir()
    for old in [root / "console" / artifact.name, root / "npm" / artifact.name.removesuffix(".tgz") / "package.tgz"]:
        if old.is_file():
            tmp = target.with_name(f".{target.name}.adopt")
            tmp.unlink(missing_ok=True)
            try:
                os.link(old, tmp)
                os.replace(tmp, target)
            except OSError:
                tmp.unlink(missing_ok=True)
            return


def _reason(exc: BaseException) -> str:
    """The root cause of a failed download in a few words (not requests' nested repr)."""
    import requests

    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    seen = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = (
            seen.__cause__
            or seen.__context__
            or next((a for a in getattr(seen, "args", ()) if isinstance(a, BaseException)), None)
        )
    if isinstance(exc, requests.Timeout):
        return "timed out"
    return type(exc).__name__


def fetch(artifact: Artifact, cache: Path | None = None, downloaded=None) -> Path:
    """The verified file in the cache, downloaded first when missing or changed (then ``downloaded(path)``)."""
    import pooch
    import requests

    target = artifact.path(cache)
    actions: list[str] = []

    def note(fname: str, action: str, _pooch) -> str:
        actions.append(action)
        return fname

    pooch_log = pooch.get_logger()
    level = pooch_log.level
    with lock(target):
        _adopt(artifact, cache)
        pooch_log.setLevel(logging.WARNING)  # our own line below, in the reader's language
        try:
            path = pooch.retrieve(
                artifact.url,
                artifact.known_hash,
                fname=artifact.name,
                path=target.parent,
                processor=note,
                downloader=pooch.HTTPDownloader(timeout=TIMEOUT, progressbar=False),
            )
        except requests.RequestException as exc:
            raise Unavailable(
                _("{url} could not be downloaded ({reason})", url=artifact.url, reason=_reason(exc))
            ) from None
        except ValueError:  # pooch: the downloaded file's hash is not the pinned one (the file is not kept)
            raise Unavailable(
                _("{name} from {url} does not have the pinned checksum", name=artifact.name, url=artifact.url)
            ) from None
        finally:
            pooch_log.setLevel(level)
    path = Path(path)
    if actions and actions[0] != "fetch":  # pooch's temporary file is owner-only: readable by all, as before
        os.chmod(path, 0o644)
        if downloaded:
            downloaded(path)
    return path


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` into ``path`` through a temporary file of the same folder: readers see all of it or nothing."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as tmp:
        tmp.write(data)
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, path)
