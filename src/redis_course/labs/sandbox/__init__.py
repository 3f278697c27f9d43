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

ENV_ISOLATION = "COURSE_LAB_ISOLATION"  # the mode the runner chose (bwrap, container, none)
MAX_SOURCE_BYTES = 1 << 20  # a lab.py bigger than 1 MiB is refused


#: The longest folder a run's folder may sit in: a box's deepest socket
#: (``<base>/course-grade-<pid>-<8>/box-<12>/redis/sock/redis.sock``) must fit the 108 bytes of a
#: Unix socket's path.  A longer TMPDIR (a user's own, or a test's) made every box fail to start.
RUN_BASE_MAX = 32


def _run_base() -> str:
    if os.geteuid() == 0 and os.path.isdir("/run") and os.access("/run", os.W_OK):
        return "/run"
    base = tempfile.gettempdir()
    if len(base) > RUN_BASE_MAX and os.access("/tmp", os.W_OK | os.X_OK):
        return "/tmp"
    return base


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
    base = _run_base()
    try:
        entries = os.listdir(base)
    except OSError:
        entries = []
    for name in entries:
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
