"""``python as_user.py UID GID COMMAND...``: run COMMAND as another user, for the red team's tests of
the non-root grading paths (started by root).

In a private mount namespace the folders Python needs are made reachable for that user (on a
machine where Python lives under /root, 0700: an empty tmpfs over the blocking folder, with exactly
those folders bound back), nothing else changes; then the user's ids, then exec.  ``setpriv
--reuid`` alone would leave that user unable to start Python."""

import ctypes
import os
import stat
import sys

from redis_course.labs.sandbox.launch import python_paths

libc = ctypes.CDLL(None, use_errno=True)
MS_BIND, MS_REC, MS_PRIVATE, CLONE_NEWNS = 4096, 16384, 1 << 18, 0x00020000


def check(rc, what):
    if rc != 0:
        raise OSError(ctypes.get_errno(), what)


def blocked(path):
    current = "/"
    for part in path.strip("/").split("/"):
        if not os.stat(current).st_mode & 0o001:
            return current
        current = os.path.join(current, part)
    return None


uid, gid, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
check(libc.unshare(CLONE_NEWNS), "unshare")
check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
keep = [os.path.realpath(p) for p in python_paths()]
for _ in range(10):
    tops = sorted({b for p in keep if (b := blocked(p))}, key=len, reverse=True)
    if not tops:
        break
    for top in tops:
        inner = [p for p in keep if p.startswith(top.rstrip("/") + "/")]
        fds = {p: os.open(p, os.O_PATH) for p in inner}
        check(libc.mount(b"tmpfs", top.encode(), b"tmpfs", 0, b"mode=755"), "tmpfs " + top)
        for p, fd in fds.items():
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(p, exist_ok=True)
            else:
                open(p, "w").close()
            check(libc.mount(f"/proc/self/fd/{fd}".encode(), p.encode(), None, MS_BIND | MS_REC, None), "bind " + p)
            os.close(fd)
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
os.execv(argv[0], argv)
