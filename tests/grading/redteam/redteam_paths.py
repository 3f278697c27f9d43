"""The grading paths the red team runs on: ``root`` (the grader is root: bubblewrap under a uid of the
box's own), ``user`` (another user: bubblewrap), ``none`` (``--no-isolation``).  :func:`grade_cli`
grades as the path says: in a subprocess, as ``nobody`` for the last two when the tests run as root
(see ``as_user.py``)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from redis_course.labs.sandbox import launch as iso

HERE = Path(__file__).parent
PATHS = ["root", "user", "none"]


def nobody() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def _as_nobody_works() -> bool:
    uid, gid = nobody()
    try:
        return (
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "as_user.py"),
                    str(uid),
                    str(gid),
                    sys.executable,
                    "-c",
                    "from redis_course.labs.sandbox import launch as i; raise SystemExit(i.mode() != 'bwrap')",
                ],
                capture_output=True,
                timeout=60,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def skip_unless_possible(path: str) -> None:
    """Skip, with the reason, a path this machine cannot run."""
    root = os.geteuid() == 0
    if path == "root" and not root:
        pytest.skip("the root path needs the tests to run as root")
    if path == "root" and iso.mode() != "bwrap":
        pytest.skip("bubblewrap cannot make namespaces here (a container): the container is the box")
    if path == "user":
        if root and not _as_nobody_works():
            pytest.skip("bubblewrap does not work for an unprivileged user here (no bwrap, or no user namespaces)")
        if not root and iso.mode() != "bwrap":
            pytest.skip("bubblewrap does not work for this user here")


def grade_cli(
    path: str, submissions: Path, out: Path, *extra: str, env: dict | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    """``course grade SUBMISSIONS --out OUT --lab 00`` on the given path."""
    argv = [
        sys.executable,
        "-c",
        "import sys; from redis_course.cli import main; raise SystemExit(main(sys.argv[1:]))",
        "grade",
        str(submissions),
        "--out",
        str(out),
        "--lab",
        "00",
        "--workers",
        "2",
        "--no-progress",
        "--call-timeout",
        "3",
        *(["--no-isolation"] if path == "none" else []),
        *extra,
    ]
    if os.geteuid() == 0 and path != "root":
        uid, gid = nobody()
        argv = [sys.executable, str(HERE / "as_user.py"), str(uid), str(gid), *argv]
        for d in (submissions.parent, out.parent):
            os.chmod(d, 0o777)
    full_env = {**os.environ, "HOME": str(out.parent), **(env or {})}
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=str(out.parent))
