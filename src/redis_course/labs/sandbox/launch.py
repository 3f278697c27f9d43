"""How a box's processes are started: bubblewrap wherever this machine lets it make namespaces.

:func:`mode` says which way a grading run isolates the processes it starts for a student:

* ``bwrap`` — bubblewrap (the sandbox Flatpak uses) makes every namespace: mounts, PIDs, network
  (loopback only), IPC, UTS, cgroup and user.  Chosen rather than namespace code of the course's
  own: it is small, audited, works for root and for an ordinary user alike, and keeps the same
  walls on both.  When the grader is root, :data:`LAUNCHER` first drops to a uid of the box's own
  (no other process on the machine has it), so bubblewrap runs unprivileged exactly as it does for
  an ordinary user; before dropping it binds the folders Python needs (which may sit under a
  folder only root may enter, such as ``/root``) at places that uid can reach.
* ``container`` — inside a container where no namespace can be made (without CAP_SYS_ADMIN or user
  namespaces, as on Gradescope; ``COURSE_CONTAINER=1`` says so where it cannot be seen): the
  container is the box.  Processes get the same resource limits, the box's cgroup where one is
  writable, and a uid of their own when the grader is root.
* ``none`` — the same limits on a machine that is not a container and where bubblewrap does not
  work (``grade`` refuses it unless ``--no-isolation`` chooses it; a student's ``check`` of their
  own code runs so).

:data:`LAUNCHER` is the one program every box process starts from (stdlib only, ``python -I -S``,
an empty environment): join the box's cgroup, (root) stage the read-only folders and drop to the
box's uid, set resource limits, then exec bubblewrap or the process itself.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

UID_BASE = 200_000

#: Top-level folders a process needs as they are (programs, libraries, configuration), read-only.
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc")
#: Folders inside those that hold sources or checkouts, not programs: covered by an empty tmpfs.
SOURCE_DIRS = ("/usr/src", "/usr/local/src")
#: The size of a tmpfs that only covers a folder (read-only once its mounts are in place): one page.
EMPTY_BYTES = 4096

LAUNCHER = r"""
import ctypes, json, os, resource, sys
cfg = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
def fail(what):
    err = ctypes.get_errno()
    os.write(2, ("launch: %s: %s\n" % (what, os.strerror(err))).encode())
    os._exit(71)
for f in cfg.get("cgroup", []):
    with open(f, "w") as fh:
        fh.write("0")
if cfg.get("stage"):
    if libc.unshare(0x00020000) != 0:
        fail("unshare")
    if libc.mount(b"none", b"/", None, 16384 | (1 << 18), None) != 0:
        fail("mount private")
    for src, dst in cfg["stage"]:
        if libc.mount(src.encode(), dst.encode(), None, 4096 | 16384, None) != 0:
            fail("bind " + src)
for name, value in cfg.get("rlimits", {}).items():
    resource.setrlimit(getattr(resource, name), (value, value))
if cfg.get("uid") is not None:
    os.setgroups([])
    os.setresgid(cfg["gid"], cfg["gid"], cfg["gid"])
    os.setresuid(cfg["uid"], cfg["uid"], cfg["uid"])
libc.prctl(1, 9, 0, 0, 0)
if os.getppid() != cfg["parent"]:
    os._exit(72)
keep = list(cfg.get("keep_fds", []))
argv = cfg["exec"]
if cfg.get("options_fd"):  # bubblewrap's options from a file, not its command line (which the box can read)
    cut = argv.index("--")
    fd = os.memfd_create("bwrap-options", 0)
    os.write(fd, b"".join(a.encode() + b"\0" for a in argv[1:cut]))
    os.lseek(fd, 0, 0)
    keep.append(fd)
    argv = [argv[0], "--args", str(fd)] + argv[cut:]
for fd in range(3, 1024):
    if fd not in keep:
        try:
            os.close(fd)
        except OSError:
            pass
    else:
        os.set_inheritable(fd, True)
sc = cfg.get("seccomp")
if sc:  # refuse the calls that make memory no process's resident set shows (launch.box_filter's program)
    code = ctypes.create_string_buffer(bytes.fromhex(sc))
    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = Prog(len(sc) // 16, ctypes.addressof(code))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        fail("seccomp")
os.execve(argv[0], argv, cfg.get("env", {}))
"""


#: Calls a box may not make (per architecture: its seccomp audit arch and the numbers): SysV shared
#: memory and message queues, memfd and POSIX message queues hold memory that no process's resident
#: set counts once it is unmapped, and that outlives the process (SysV: the IPC namespace, which in a
#: container or without isolation is the machine's).  Shared memory stays: /dev/shm, a sized tmpfs.
DENIED_CALLS = {
    "x86_64": {
        "arch": 0xC000003E,
        "x32": True,  # shmget, msgget, mq_open, memfd_create
        "deny": [29, 68, 240, 319],
    },
    "aarch64": {"arch": 0xC00000B7, "x32": False, "deny": [194, 186, 180, 279]},
}


#: What a student's process may not do with the kernel's buffers, on top of :data:`DENIED_CALLS` (a
#: second filter, set by :func:`.inbox.run` once the process's own Redis connection is made): memory
#: a socket or a pipe holds for data nobody read is the kernel's, counted in no resident set, so the
#: box keeps every buffer at the size the kernel gives it and in a descriptor the grader can count.
#: Refused: sendmsg and sendmmsg (descriptors in flight over SCM_RIGHTS: sockets no process holds),
#: listen (connections queued unaccepted, each with its data), vmsplice (pages pinned in a pipe once
#: unmapped), io_uring (all of these again, past this filter), F_SETPIPE_SZ (a pipe past its 16
#: pages), SO_SNDBUF, SO_RCVBUF and their FORCE variants (a socket past net.core.wmem_default), and
#: every socket but a Unix stream one (datagrams queue from many senders; TCP tunes its own buffers
#: up to megabytes) -- internet sockets stay when the box's Redis is reached over TCP (``check`` of a
#: student's own server, on their machine: not a grading path).
#: The student talks to Redis over one Unix stream socket: redis-py needs socket, connect, sendto
#: and recv, nothing of the above.
STUDENT_CALLS = {
    "x86_64": {
        "deny": {
            "sendmsg": 46,
            "sendmmsg": 307,
            "listen": 50,
            "vmsplice": 278,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
        "socket": 41,
        "socketpair": 53,
        "setsockopt": 54,
        "fcntl": 72,
    },
    "aarch64": {
        "deny": {
            "sendmsg": 211,
            "sendmmsg": 269,
            "listen": 201,
            "vmsplice": 75,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
        "socket": 198,
        "socketpair": 199,
        "setsockopt": 208,
        "fcntl": 25,
    },
}
AF_UNIX, AF_INET, AF_INET6, SOCK_STREAM, SOL_SOCKET = 1, 2, 10, 1, 1
SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE, F_SETPIPE_SZ = 7, 8, 32, 33, 1031


LD, JEQ, JGE, AND, RET = 0x20, 0x15, 0x35, 0x54, 0x06  # classic BPF: load word, jumps, and, return
ALLOW, EPERM = 0x7FFF0000, 0x00050000 | 1


def _assemble(prog: list) -> bytes:
    """A classic BPF program from ``prog``: ``(code, jt, jf, k)`` instructions and label strings, a
    jump's target given as a label (resolved here) or as an offset."""
    import struct

    where, out = {}, []
    for item in prog:
        if isinstance(item, str):
            where[item] = len(out)
        else:
            out.append(item)
    code = b""
    for i, (op, jt, jf, k) in enumerate(out):
        jt, jf = (where[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf))
        assert 0 <= jt < 256 and 0 <= jf < 256, "a jump past 255 instructions"
        code += struct.pack("=HBBI", op, jt, jf, k)
    return code


def _head(base: dict) -> list:
    """Every filter's start: a call of another ABI (or x32) goes to ``deny``; the call's number is loaded."""
    prog = [(LD, 0, 0, 4), (JEQ, 0, "deny", base["arch"]), (LD, 0, 0, 0)]
    if base["x32"]:
        prog.append((JGE, "deny", 0, 0x40000000))
    return prog


def box_filter() -> str | None:
    """What :data:`LAUNCHER` installs in every box process (hex; None: an architecture it has no
    numbers for): :data:`DENIED_CALLS` refused with EPERM, everything else allowed."""
    base = seccomp_filter()
    if base is None:
        return None
    prog = (
        _head(base) + [(JEQ, "deny", 0, nr) for nr in base["deny"]] + [(RET, 0, 0, ALLOW), "deny", (RET, 0, 0, EPERM)]
    )
    return _assemble(prog).hex()


def student_filter(tcp: bool = False) -> bytes | None:
    """The classic BPF program of :data:`STUDENT_CALLS` for this machine (None: an architecture it has
    no numbers for), ``tcp``: internet sockets allowed too.  Every refusal is EPERM; arguments are
    compared on their low 32 bits, the ``int`` the kernel itself reads."""
    import platform

    base, calls = DENIED_CALLS.get(platform.machine()), STUDENT_CALLS.get(platform.machine())
    if base is None or calls is None:
        return None

    def ret(label: str, value: int) -> None:
        prog.append(label)
        prog.append((RET, 0, 0, value))

    def arg(n: int) -> int:  # the low 32 bits of argument n (little-endian seccomp_data)
        return 16 + 8 * n

    prog = _head(base)
    for nr in calls["deny"].values():
        prog.append((JEQ, "deny", 0, nr))
    prog += [
        (JEQ, "socket", 0, calls["socket"]),
        (JEQ, "socket", 0, calls["socketpair"]),
        (JEQ, "sockopt", 0, calls["setsockopt"]),
        (JEQ, "fcntl", 0, calls["fcntl"]),
        (RET, 0, 0, ALLOW),
    ]
    prog += ["socket", (LD, 0, 0, arg(0)), (JEQ, "type", 0, AF_UNIX)]
    if tcp:  # a student's own server, on their own machine: its name may need DNS (UDP) too
        prog += [(JEQ, "allow", 0, AF_INET), (JEQ, "allow", 0, AF_INET6)]
    prog += [(RET, 0, 0, EPERM), "type", (LD, 0, 0, arg(1)), (AND, 0, 0, 0xF), (JEQ, "allow", "deny", SOCK_STREAM)]
    prog += ["sockopt", (LD, 0, 0, arg(1)), (JEQ, 0, "allow", SOL_SOCKET), (LD, 0, 0, arg(2))]
    for opt in (SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE):
        prog.append((JEQ, "deny", 0, opt))
    prog.append((JEQ, "deny", "allow", SO_RCVBUFFORCE))
    prog += ["fcntl", (LD, 0, 0, arg(1)), (JEQ, "deny", "allow", F_SETPIPE_SZ)]
    ret("allow", ALLOW)
    ret("deny", EPERM)
    return _assemble(prog)


def install_filter(code: bytes) -> None:
    """Adds the BPF program ``code`` to this process's seccomp filters (no_new_privs is set already:
    :data:`LAUNCHER`); every process it forks or executes keeps it.  OSError when refused."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(code)
    prog = Prog(len(code) // 8, ctypes.addressof(buf))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "seccomp: " + os.strerror(err))


def seccomp_filter() -> dict | None:
    """What :data:`LAUNCHER` refuses on this machine (None: an architecture it has no numbers for)."""
    import platform

    return DENIED_CALLS.get(platform.machine())


def is_root() -> bool:
    return os.geteuid() == 0


@functools.lru_cache(maxsize=1)
def bwrap_binary() -> str | None:
    """``bwrap`` if it is installed and can make its namespaces here (probed once, as this grader
    would run it: from root through a uid of its own).  ``COURSE_BWRAP`` names another binary
    (empty: none, as in a container that cannot make namespaces)."""
    binary = shutil.which(os.environ.get("COURSE_BWRAP", "bwrap") or "/nonexistent/bwrap")
    if not binary:
        return None
    probe = [binary, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"]
    try:
        if is_root():
            uid = UID_BASE + 1
            ok = (
                subprocess.run(
                    probe,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=20,
                    env={},
                    user=uid,
                    group=uid,
                    extra_groups=[],
                ).returncode
                == 0
            )
        else:
            ok = (
                subprocess.run(
                    probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20
                ).returncode
                == 0
            )
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return binary if ok else None


def in_container() -> bool:
    """Whether this process runs in a container (Docker, Podman, Kubernetes; or ``COURSE_CONTAINER=1``)."""
    if (
        os.environ.get("COURSE_CONTAINER") == "1"
        or os.path.exists("/.dockerenv")
        or os.path.exists("/run/.containerenv")
    ):
        return True
    try:
        with open("/proc/1/cgroup") as f:
            text = f.read()
    except OSError:
        return False
    return any(word in text for word in ("docker", "kubepods", "containerd", "libpod"))


def mode(allow: bool = True) -> str:
    """``bwrap``, ``container`` (no namespaces can be made in this container) or ``none``."""
    if not allow:
        return "none"
    if bwrap_binary():
        return "bwrap"
    return "container" if in_container() else "none"


MODES = {
    "bwrap": "bubblewrap (own mounts, PIDs, network, IPC and user namespace{uid})",
    "container": "the container is the box: no namespaces can be made here (resource limits{uid})",
    "none": "none: student code runs unisolated, with resource limits only{uid}",
}


def describe_mode(name: str) -> str:
    uid = ", a uid of its own" if is_root() else ""
    return MODES.get(name, name).format(uid=uid)


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one of them."""
    return sorted({p for p in paths if not any(o != p and _inside(p, o) for o in paths)})


def _blocked_for_others(path: str) -> bool:
    """Whether a uid that is neither owner nor group could not reach ``path`` (a parent it may not enter)."""
    current = "/"
    for part in Path(path).parts[1:]:
        if not os.stat(current).st_mode & 0o001:
            return True
        current = os.path.join(current, part)
    return False


def reachable_by_others(paths: list[str]) -> bool:
    """Whether a uid of its own could read every one of ``paths`` without a mount namespace."""
    return not any(_blocked_for_others(os.path.realpath(p)) for p in paths if os.path.exists(p))


class Launch:
    """What one box process is started with: the staged read-only folders, the uid, the cgroup.

    ``uid``: the box's own uid when the grader is root (None otherwise).  ``stage_dir``: a folder of
    the grader's where read-only folders that the uid cannot reach are bound first (root only)."""

    def __init__(self, uid: int | None, stage_dir: Path | None, cgroup: list[str] | None = None) -> None:
        self.uid = uid
        self.stage_dir = stage_dir
        self.cgroup = cgroup or []
        self._staged: dict[str, str] = {}

    def visible(self, path: str) -> str:
        """Where the launcher's process finds ``path`` (a staged copy when the uid cannot reach it)."""
        path = os.path.realpath(path)
        if self.uid is None or self.stage_dir is None or not _blocked_for_others(path):
            return path
        if path not in self._staged:
            dst = self.stage_dir / str(len(self._staged))
            if os.path.isdir(path):
                dst.mkdir(exist_ok=True)
                os.chmod(dst, 0o755)
            else:
                dst.touch(exist_ok=True)
                os.chmod(dst, 0o644)
            self._staged[path] = str(dst)
        return self._staged[path]

    def command(
        self, argv: list[str], rlimits: dict[str, int], keep_fds: list[int] = (), env: dict[str, str] | None = None
    ) -> list[str]:
        """``argv`` started through :data:`LAUNCHER` (an empty environment unless ``env``).  Under
        bubblewrap the root is made read-only once every mount is in place, and bubblewrap reads its
        options from a file: what a box's process can read of its first process's command line is
        then the command alone, not the grader's folders."""
        wrapped = bool(argv) and os.path.basename(argv[0]) == "bwrap" and "--" in argv
        if wrapped:
            cut = argv.index("--")
            argv = [*argv[:cut], "--remount-ro", "/", *argv[cut:]]
        cfg = {
            "exec": argv,
            "stage": sorted(self._staged.items()),
            "cgroup": self.cgroup,
            "uid": self.uid,
            "gid": self.uid,
            "rlimits": rlimits,
            "keep_fds": list(keep_fds),
            "env": env or {},
            "parent": os.getpid(),
            "options_fd": wrapped,
            "seccomp": box_filter(),
        }
        return [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(cfg)]


def bwrap_args(
    launch: Launch,
    *,
    read_only: list[str],
    hide: list[str] = (),
    tmp_mb: int = 16,
    hostname: str = "box",
    info_fd: int | None = None,
) -> list[str]:
    """The walls every box process gets under bubblewrap: every namespace (no network but loopback),
    no capabilities, an empty environment, killed with its parent; the system folders and exactly
    ``read_only`` visible, read-only; source folders (and ``hide``) inside the system folders
    covered by empty read-only tmpfs; a private /proc, a read-only /dev with a size-limited /dev/shm,
    and a size-limited /tmp.  Every tmpfs made here has a size, and every one the box may write in
    has at most ``tmp_mb`` MiB.  Mounts that follow are the caller's (and must keep that so)."""
    binary = bwrap_binary()
    assert binary, "bubblewrap is not usable here"
    args = [
        binary,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--hostname",
        hostname,
    ]
    for name in SYSTEM_DIRS:
        top = "/" + name
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", launch.visible(top), top]
    hidden = []
    for h in (*SOURCE_DIRS, *hide):
        h = os.path.realpath(h)
        if any(_inside(h, "/" + n) for n in SYSTEM_DIRS) and os.path.isdir(h) and h not in hidden:
            hidden.append(h)
            args += ["--perms", "0755", "--size", str(EMPTY_BYTES), "--tmpfs", h]
    # /dev: bubblewrap's own tmpfs (the machine's device nodes bound in it) is made read-only at the
    # end; /dev/shm, where POSIX shared memory lives, is a tmpfs of the same size as /tmp
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(tmp_mb << 20),
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "1777",
        "--size",
        str(tmp_mb << 20),
        "--tmpfs",
        "/tmp",
    ]
    covered = [os.path.realpath(h) for h in (*SOURCE_DIRS, *hide)]
    kept = outermost([os.path.realpath(x) for x in read_only if os.path.exists(x)])
    # a kept folder under /tmp (a checkout there) gets a tmpfs of its own for its parents, made
    # read-only below: the folders made to hold its mounts are not the box's writable space
    in_tmp = sorted({"/tmp/" + p.split("/")[2] for p in kept if _inside(p, "/tmp") and p != "/tmp"})
    for t in in_tmp:
        args += ["--perms", "0755", "--size", str(EMPTY_BYTES), "--tmpfs", t]
    for p in kept:
        in_system = any(_inside(p, "/" + n) for n in SYSTEM_DIRS)
        if not in_system or any(_inside(p, h) for h in covered):
            args += ["--ro-bind", launch.visible(p), p]
    for t in (*in_tmp, *hidden, "/dev"):
        args += ["--remount-ro", t]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    return args


def python_paths() -> list[str]:
    """What a box's Python must read: the interpreter, its standard library, and the folders that
    hold ``redis``, ``fakeredis`` (with ``lupa`` and ``sortedcontainers``) and ``redis_course``."""
    paths = [sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable)), *import_path().split(":")]
    out: list[str] = []
    for p in map(os.path.realpath, paths):
        if p not in out:
            out.append(p)
    return out


@functools.lru_cache(maxsize=None)
def import_path() -> str:
    """``sys.path`` entries that make ``redis``, ``fakeredis`` and ``redis_course`` importable under ``-I -S``
    (found without importing them: a grader that runs on redis-server never loads fakeredis)."""
    import importlib.util

    entries: list[str] = []
    for name in ("redis_course", "redis", "fakeredis"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        p = str(Path(spec.origin).resolve().parents[1])
        if p not in entries:
            entries.append(p)
    return ":".join(entries)


UID_SLOTS = 64  # boxes one grader process may hold at once (each takes two uids: its processes', its server's)
_uid_lock = threading.Lock()
_uids_held: set[int] = set()


def _uid_in_use(uid: int) -> bool:
    """Whether any process on this machine runs as ``uid`` (its /proc entry is owned by it)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    return True
            except OSError:
                continue
    return False


def new_uid() -> int:
    """A pair of uids (``uid``, ``uid + 1``) no other box and no process on this machine has while
    the box lives: one of :data:`UID_SLOTS` per grader process (from its pid, so two graders never
    meet), skipping one a live process still has.  Boxes run at once by one grader (``grade
    --jobs``) get different uids, so one's processes never count against another's RLIMIT_NPROC
    nor may signal them.  :func:`release_uid` gives it back."""
    base = UID_BASE + 16 + 2 * UID_SLOTS * os.getpid()
    with _uid_lock:
        for slot in range(UID_SLOTS):
            uid = base + 2 * slot
            if uid in _uids_held or _uid_in_use(uid) or _uid_in_use(uid + 1):
                continue
            _uids_held.add(uid)
            return uid
    raise RuntimeError(f"more than {UID_SLOTS} boxes at once in one grader")


def release_uid(uid: int | None) -> None:
    with _uid_lock:
        _uids_held.discard(uid)  # type: ignore[arg-type]


def read_info(fd: int, timeout: float = 10.0) -> dict:
    """bubblewrap's ``--info-fd`` JSON (``child-pid`` and the namespaces), read from a pipe."""
    import select

    buf = b""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
        try:
            return json.loads(buf)
        except ValueError:
            continue
    try:
        return json.loads(buf)
    except ValueError:
        return {}
