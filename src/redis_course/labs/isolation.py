"""Linux isolation primitives for the processes that run untrusted code (stdlib + ctypes only).

Three ways to run untrusted code, chosen by :func:`mode`:

* ``namespaces`` (the grader is root): :mod:`._child` and :mod:`.fakeserver` enter namespaces with
  the calls below before any untrusted byte runs, and run as a uid of their own;
* ``bwrap`` (not root, bubblewrap works): the same namespaces and the same allow-list of paths,
  made by ``bwrap`` (:func:`bwrap_command`) in an unprivileged user namespace;
* ``none``: the invoking user's process with resource limits only (``--no-isolation``, or a student
  checking their own code where bubblewrap is missing).

The private redis-server gets a network namespace of its own in the first two
(:func:`netns_command`).

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
import functools
import os
import pwd
import resource
import shutil
import stat
import subprocess
import sys
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


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one of them."""
    return sorted({p for p in paths if not any(o != p and _inside(p, o) for o in paths)})


def overlay_empty(directory: str, keep: list[str], mode: int = 0o755, size_mb: int = 16) -> None:
    """Cover ``directory`` with an empty tmpfs, binding back exactly the ``keep`` paths under it
    (only their parent folders are recreated, empty: a sibling of a kept path stays hidden)."""
    directory = os.path.realpath(directory)
    if not os.path.isdir(directory) or any(_inside(directory, k) for k in keep):
        return  # nothing to hide, or it is (inside) something the process needs
    inner = _outermost([k for k in keep if _inside(k, directory) and k != directory])
    fds = {}
    for path in inner:
        try:
            fds[path] = os.open(path, os.O_PATH | os.O_NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            continue
    try:
        mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode:o},size={size_mb}m,nr_inodes=4096")
        for target, fd in fds.items():
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.mkdir(target)
            else:
                open(target, "w").close()
            mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    finally:
        for fd in fds.values():
            os.close(fd)


def allow_only(keep: list[str], private: list[str] = (), hide: list[str] = ()) -> None:
    """The allow-list of paths (in a private mount namespace, as root): every top-level folder but the
    system's own is covered by an empty tmpfs with exactly the ``keep`` paths bound back, so another
    checkout of the course beside this one (its solutions, hidden tests), the grader's run folder
    (run.json, results.json, pytest.log), other users' homes and data folders are out of sight
    wherever they are; ``private`` folders become empty, writable ones; ``hide`` folders are covered
    even inside a system folder."""
    for name in sorted(os.listdir("/")):
        top = os.path.join("/", name)
        if name in SYSTEM_DIRS or name in ("dev", "proc", "sys") or top in private or os.path.islink(top) \
                or not os.path.isdir(top):
            continue
        overlay_empty(top, keep)
    for d in private:
        overlay_empty(d, keep, mode=0o1777)
    for d in hide:
        overlay_empty(d, keep)


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


# -- unprivileged ids, network namespaces, bubblewrap ------------------------------------------------

def unprivileged_ids() -> tuple[int, int]:
    """The uid and gid of ``nobody`` (what a root grader runs its private servers as)."""
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def loopback_up() -> None:
    """Bring ``lo`` up in a fresh network namespace (127.0.0.1 inside it, for a cluster bus)."""
    import fcntl
    import socket
    import struct

    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


NETNS_BOOT = ("import sys, importlib.util as u; s = u.spec_from_file_location('iso', sys.argv[1]); "
              "m = u.module_from_spec(s); s.loader.exec_module(m); m.netns_exec(sys.argv[2:])")


def netns_exec(argv: list[str]) -> None:
    """As root: a network namespace of its own with only ``lo``, then ``nobody``, then exec ``argv``."""
    uid, gid = unprivileged_ids()
    prctl(PR_SET_PDEATHSIG, 9)
    unshare(CLONE_NEWNET | CLONE_NEWIPC)
    loopback_up()
    drop_privileges(uid, gid)
    os.execv(argv[0], argv)


@functools.lru_cache(maxsize=1)
def bwrap_binary() -> str | None:
    """``bwrap`` if it is installed and can make namespaces here as this user (probed once)."""
    binary = shutil.which("bwrap")
    if not binary:
        return None
    try:
        ok = subprocess.run([binary, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return binary if ok else None


def mode(allow: bool = True) -> str:
    """``namespaces`` (root), ``bwrap`` (bubblewrap works for this user) or ``none``."""
    if not allow:
        return "none"
    if os.geteuid() == 0:
        return "namespaces"
    return "bwrap" if bwrap_binary() else "none"


@functools.lru_cache(maxsize=1)
def root_can_unshare_net() -> bool:
    """Whether this root may make network namespaces (a container without CAP_SYS_ADMIN may not)."""
    probe = "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0)"
    try:
        return subprocess.run([sys.executable, "-I", "-S", "-c", probe], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def netns_command(argv: list[str], writable: list[str]) -> list[str]:
    """``argv`` in a network namespace of its own (nothing but its Unix socket reaches it, it reaches
    nothing): as root through :func:`netns_exec` (then as ``nobody``), else through bwrap; unchanged
    when neither is possible (the ACL users still hold)."""
    if os.geteuid() == 0 and root_can_unshare_net():
        return [sys.executable, "-I", "-S", "-c", NETNS_BOOT, os.path.abspath(__file__), *argv]
    binary = bwrap_binary()
    if binary is None:
        return argv
    return [binary, "--unshare-net", "--unshare-ipc", "--die-with-parent", "--ro-bind", "/", "/",
            "--dev", "/dev", *[x for w in writable for x in ("--bind", w, w)], "--", *argv]


#: Top-level folders a process needs as they are (programs, libraries, configuration).
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc")


def bwrap_command(argv: list[str], *, read_only: list[str], writable: list[str], network: bool,
                  tmp_mb: int, chdir: str, hide: list[str] = (), scratch: str | None = None,
                  files: list[str] = ()) -> list[str]:
    """``argv`` under bubblewrap with the same allow-list as the root path: the system folders, then
    exactly ``read_only`` and ``writable``; a private /proc, /dev, size-limited /tmp; ``scratch`` a
    size-limited tmpfs too, with ``files`` bound read-only into it; no network unless ``network``;
    its own PID namespace, killed with its parent; no capabilities."""
    binary = bwrap_binary()
    assert binary, "bwrap is not usable here"
    args = [binary, "--unshare-all", *(["--share-net"] if network else []), "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    for name in SYSTEM_DIRS:
        top = "/" + name
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for h in hide:  # a hidden folder inside a system one (a checkout under /usr/src)
        if any(_inside(h, "/" + n) for n in SYSTEM_DIRS) and os.path.isdir(h):
            args += ["--tmpfs", h]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    for p in _outermost([os.path.realpath(x) for x in read_only if os.path.exists(x)]):
        if not any(_inside(p, "/" + n) for n in SYSTEM_DIRS) or any(_inside(p, h) for h in hide):
            args += ["--ro-bind", p, p]
    for p in writable:
        args += ["--bind", p, p]
    if scratch:
        args += ["--perms", "0700", "--size", str(tmp_mb << 20), "--tmpfs", scratch]
        for f in files:
            args += ["--ro-bind", f, f]
    return args + ["--chdir", chdir, "--", *argv]
