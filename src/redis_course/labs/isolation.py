"""Linux isolation primitives for the processes that run untrusted code (stdlib + ctypes only).

Used by :mod:`._child` (student code) and :mod:`.fakeserver` before any untrusted byte runs, while
the process is still root.  Nothing here is used when the grader is not root: then the student's
code runs as the invoking user with resource limits only (a student checking their own code).

* ``unshare(NEW_NS | NEW_NET | NEW_PID | NEW_IPC)`` — own mounts, no network (only Unix sockets),
  own process numbering (it sees no other process), own System V IPC.
* ``overlay_empty(dir, keep)`` — an empty tmpfs over ``dir`` with only the ``keep`` paths bound back
  (an ``O_PATH`` descriptor opened before the tmpfs hides the original, bound through
  ``/proc/self/fd/N``).  This hides the course repository (hidden tests, solutions, .git), the
  submissions and the output folders, gives private /tmp, /var/tmp and /dev/shm, and makes the
  Python installation reachable for an unprivileged user even when it lives under /root.
* ``drop_privileges(uid)`` — a uid of its own (``UID_BASE + pid``: no other process has it, so no
  other process can be signalled, traced or read through /proc, and RLIMIT_NPROC counts only it).
"""
from __future__ import annotations

import ctypes
import os
import resource
import stat
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
UID_BASE = 200_000

_libc = ctypes.CDLL(None, use_errno=True)


class IsolationError(OSError):
    pass


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise IsolationError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                       data.encode() if data else None), f"mount {target}")


def make_mounts_private() -> None:
    mount("none", "/", None, MS_REC | MS_PRIVATE)


def mount_proc() -> None:
    """A /proc that shows only this PID namespace (call in the namespace's first process)."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), "prctl")


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def overlay_empty(directory: str, keep: list[str], mode: int = 0o755) -> None:
    """Cover ``directory`` with an empty tmpfs, binding back what ``keep`` needs under it."""
    directory = os.path.realpath(directory)
    if not os.path.isdir(directory) or any(_inside(directory, k) for k in keep):
        return  # nothing to hide, or it is (inside) something the process needs
    children = sorted({Path(k).relative_to(directory).parts[0] for k in keep
                       if _inside(k, directory) and k != directory})
    fds = {}
    for name in children:
        try:
            fds[name] = os.open(os.path.join(directory, name), os.O_PATH | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue
    try:
        mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode:o},size=16m,nr_inodes=4096")
        for name, fd in fds.items():
            target = os.path.join(directory, name)
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.mkdir(target)
            else:
                open(target, "w").close()
            mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    finally:
        for fd in fds.values():
            os.close(fd)


def _traversable(st: os.stat_result, uid: int, gid: int) -> bool:
    if st.st_uid == uid:
        return bool(st.st_mode & 0o100)
    if st.st_gid == gid:
        return bool(st.st_mode & 0o010)
    return bool(st.st_mode & 0o001)


def first_blocked_ancestor(path: str, uid: int, gid: int) -> str | None:
    """The first directory on the way to ``path`` that ``uid`` may not enter, or None."""
    current = "/"
    for part in Path(path).parts[1:]:
        if not _traversable(os.stat(current), uid, gid):
            return current
        current = os.path.join(current, part)
    return None


def expose(paths: list[str], uid: int, gid: int, keep: list[str]) -> None:
    """Make every path in ``paths`` reachable for ``uid`` (the rest of a blocked parent stays hidden)."""
    for _ in range(10):
        blocked = {a for p in paths if (a := first_blocked_ancestor(p, uid, gid))}
        if not blocked:
            return
        for ancestor in sorted(blocked, key=len, reverse=True):
            overlay_empty(ancestor, keep)


def drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def set_limits(cpu_s: float, memory_mb: int, nproc: int, fsize_mb: int, nofile: int) -> None:
    """RLIMIT_CPU, RLIMIT_AS, RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE; no core files."""
    cpu = max(1, int(cpu_s))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_mb << 20, fsize_mb << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def processes_of(uid: int) -> int:
    """How many processes ``uid`` has now (for RLIMIT_NPROC when the uid is shared)."""
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n
