"""The box: everything one student run can influence, in one place the grader talks to.

Modules, by what they hold:

* :mod:`.box`        — one box per student run: its processes, its Redis, its fault proxy, its cgroup
* :mod:`.process`    — one process of the box, seen from the grader (calls, bounded replies, faults)
* :mod:`.inbox`      — what runs inside the box: its fork server and the processes it forks
* :mod:`.server`     — the box's Redis (redis-server with ACL users, or a fakeredis server)
* :mod:`.fakeserver` — the fakeredis server process (Lua without Python)
* :mod:`.faultproxy` — the RESP proxy between the box and its Redis that makes crashes and pauses
* :mod:`.tasks`      — the grader's work inside the box (files the student can write)
* :mod:`.launch`     — how box processes start (bubblewrap, a uid of their own, limits), the modes
* :mod:`.cgroups`, :mod:`.limits` — memory, processes and CPU; the wall-time budget of a run
* :mod:`.clock`      — a machine clock set off for one process (a fault applied before it runs)
* :mod:`.errors`     — what a test sees when the student's code does not return normally
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from ...core.backend import CourseError
from ...l10n import _

ENV_ISOLATION = "COURSE_LAB_ISOLATION"  # the mode the runner chose (bwrap, container, none)
MAX_SOURCE_BYTES = 1 << 20  # a lab.py bigger than 1 MiB is refused


#: The longest folder a run's folder may sit in: a box's deepest socket
#: (``<base>/course-grade-<pid>-<8>/box-<12>/redis/sock/redis.sock``) must fit the 108 bytes of a
#: Unix socket's path, whatever TMPDIR the grader was given (a user's own, a test's tmp_path).
RUN_BASE_MAX = 32


class NoRunBase(CourseError):
    """No folder this user may write has a path short enough for a box's sockets."""


def _writable(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def _run_bases() -> list[str]:
    """Where a run's folder may go, best first: ``/run`` for root (a tmpfs no user can write), then
    TMPDIR, ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the user's ``/run/user/<uid>``."""
    bases = ["/run"] if os.geteuid() == 0 else []
    bases += [os.environ[v] for v in ("TMPDIR", "TEMP", "TMP") if os.environ.get(v)]
    bases += ["/tmp", "/var/tmp", "/dev/shm", f"/run/user/{os.getuid()}"]
    return [os.path.abspath(b) for b in dict.fromkeys(bases)]


def _run_base() -> str:
    """The first of :func:`_run_bases` this user may write whose path is short enough for a box's
    sockets (at most :data:`RUN_BASE_MAX` characters); :class:`NoRunBase` when there is none."""
    for base in _run_bases():
        if len(base) <= RUN_BASE_MAX and _writable(base):
            return base
    raise NoRunBase(
        _(
            "No folder with a path of at most {n} characters can be written here for the lab's sockets: "
            "set TMPDIR to a short folder you may write, for example `export TMPDIR=/tmp`.",
            n=RUN_BASE_MAX,
        )
    )


def make_run_dir(prefix: str = "course-grade-") -> Path:
    """A folder for one run's boxes: others may enter it (a box's uid reaches its sockets), not list it.
    Its name holds its owner's pid (``course-grade-<pid>-...``): :func:`sweep` removes it once that
    process is gone."""
    d = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=_run_base()))
    os.chmod(d, 0o711)
    return d


_OWNED = re.compile(r"^course-[a-z]+-(\d+)-")


def _gone(pid: int) -> bool:
    """No process ``pid`` runs: none has it, or it has ended and waits to be reaped (a zombie, whose
    pid no new process can take)."""
    if pid == os.getpid():
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return False


def sweep() -> list[str]:
    """What runs whose owner died left (a runner or grader killed by SIGKILL cannot clean up): the
    course's run folders of this user (:func:`make_run_dir`) and its box cgroups
    (:mod:`.cgroups`, ``course-grade/box-<grader pid>-...``), only those whose owner pid is gone.
    The paths removed."""
    from . import cgroups

    removed = []
    bases = [b for b in _run_bases() if len(b) <= RUN_BASE_MAX]
    entries = []
    for base in bases:
        try:
            entries += [(base, name) for name in os.listdir(base)]
        except OSError:
            continue
    for base, name in entries:
        m = _OWNED.match(name)
        path = os.path.join(base, name)
        if not m or not _gone(int(m.group(1))):
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_uid != os.geteuid() or not os.path.isdir(path) or os.path.islink(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed + cgroups.sweep(_gone)
