"""A fakeredis server on a Unix socket, in its own process: the private Redis of a grading run when
``redis-server`` is not installed.

    python -m redis_course.labs.fakeserver /path/to/redis.sock [--cluster] [paths to keep visible...]

``--cluster``: refuse, as one node of a Redis Cluster does, a command, transaction or script whose
keys are in different hash slots (CROSSSLOT; :func:`redis_course.compat.refuse_cross_slot`).

Student code reaches it only through the socket; a Lua script that never ends or a flood of
commands stalls this process, never the grader, which kills and restarts it.
"""
from __future__ import annotations

import os
import sys


def make_server(path: str):
    from ..compat import bare_fakeredis_lua, unix_fake_server  # fakeredis's private parts: fenced there

    bare_fakeredis_lua()  # Lua with io and os would run commands and read files in this process
    return unix_fake_server(path)


def _isolate(path: str, keep: list[str]) -> None:
    """As root: no network, only the socket's folder and Python visible, then run as ``nobody``
    (under bubblewrap the runner made the same namespaces before this process started)."""
    from . import isolation as iso
    uid, gid = iso.unprivileged_ids()
    iso.unshare(iso.CLONE_NEWNS | iso.CLONE_NEWNET | iso.CLONE_NEWIPC)
    iso.make_mounts_private()
    keep = [os.path.realpath(k) for k in [os.path.dirname(path), *keep]]
    iso.allow_only(keep, ["/tmp", "/var/tmp", "/dev/shm"])  # its Lua has io and os: it sees what it needs only
    iso.expose(keep, uid, gid, keep)
    iso.drop_privileges(uid, gid)


def main(argv: list[str]) -> int:
    path, rest = argv[0], argv[1:]
    cluster = "--cluster" in rest
    keep = [k for k in rest if k and k != "--cluster"]
    import fakeredis  # noqa: F401 - loaded while every file is still readable
    import lupa  # noqa: F401

    if cluster:
        from ..cluster.slots import key_slot
        from ..compat import refuse_cross_slot
        refuse_cross_slot(key_slot)  # imports fakeredis's private parts now, while they are readable

    if os.geteuid() == 0:
        _isolate(path, keep)
    server = make_server(path)
    os.chmod(path, 0o777)
    print("ready", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
