"""A fakeredis server on a Unix socket: the box's Redis when ``redis-server`` is not installed.

    python -I -S -c BOOT IMPORT_PATH /path/to/redis.sock [--cluster]

It runs inside the box (:mod:`.server` starts it under the same walls as the student's processes),
so whatever a script could do in it stays there.  Its Lua is Redis 7's and nothing of Python
(:func:`redis_course.compat.bare_fakeredis_lua`): no ``python`` table, no ``io``/``os``/``debug``, no
Python attribute of any object.  ``--cluster``: refuse, as one node of a Redis Cluster does, a
command, transaction or script whose keys are in different hash slots (CROSSSLOT;
:func:`redis_course.compat.refuse_cross_slot`).  Cost: fakeredis's, one lock per server.
"""
from __future__ import annotations

import os
import sys

BOOT = ("import sys; sys.path[:0] = sys.argv[1].split(':'); "
        "from redis_course.labs.sandbox.fakeserver import main; raise SystemExit(main(sys.argv[2:]))")


def make_server(path: str):
    from ...compat import bare_fakeredis_lua, unix_fake_server  # fakeredis's private parts: fenced there

    bare_fakeredis_lua()
    return unix_fake_server(path)


def main(argv: list[str]) -> int:
    path, rest = argv[0], argv[1:]
    if "--cluster" in rest:
        from ...cluster.slots import key_slot
        from ...compat import refuse_cross_slot
        refuse_cross_slot(key_slot)
    server = make_server(path)
    os.chmod(path, 0o777)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
