"""``python as_user.py UID GID COMMAND...``: run COMMAND as another user, for the red team's tests of
the non-root grading paths (started by root).

In a private mount namespace the interpreter and installed packages are made reachable for that
user (on a machine where Python lives under /root, 0700), nothing else changes; then the user's
ids, then exec.  ``setpriv --reuid`` alone would leave that user unable to start Python."""
import os
import sys

from redis_course.labs import isolation as iso
from redis_course.labs.forkserver import python_paths

uid, gid, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
iso.unshare(iso.CLONE_NEWNS)
iso.make_mounts_private()
keep = python_paths()
iso.expose(keep, uid, gid, keep)
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
os.execv(argv[0], argv)
