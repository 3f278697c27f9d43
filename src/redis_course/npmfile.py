"""One file out of a pinned npm package, for the tests and benchmarks (never for the site itself).

``npm_file("axe-core", "4.14.1", "axe.min.js", integrity=...)`` has :mod:`.downloads` (pooch) fetch the
package's tarball from the npm registry once into the course's cache, checked against the registry's
``sha512-...`` integrity string written in the caller's code (a changed or truncated download is
refused and not kept), and takes the file out of it into ``<cache>/npm/<name>-<version>/``.  Later
calls check the tarball's digest again and read the cache, without network.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from . import downloads
from .downloads import cache_dir


class NpmFileError(RuntimeError):
    pass


def npm_file(name: str, version: str, member: str, integrity: str) -> Path:
    """The path of ``member`` (relative to the package folder) of ``name@version``, cached and verified."""
    try:
        artifact = downloads.npm_artifact(name, version, integrity)
        tarball = downloads.fetch(artifact)
    except downloads.Unavailable as exc:
        raise NpmFileError(f"{name}@{version}: {exc}") from None
    target = cache_dir() / "npm" / artifact.name.removesuffix(".tgz") / member
    with downloads.lock(target):
        if target.is_file():
            return target
        with tarfile.open(tarball, mode="r:gz") as tar:
            try:
                content = tar.extractfile(f"package/{member}")
            except KeyError:
                content = None
            if content is None:
                raise NpmFileError(f"{name}@{version} has no file {member}")
            downloads.write_atomically(target, content.read())
    return target
