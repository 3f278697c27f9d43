"""A fakeredis server on a Unix socket: the box's Redis when ``redis-server`` is not installed.

    python -I -S -c BOOT IMPORT_PATH /path/to/redis.sock [--cluster]

It runs inside the box (:mod:`.server` starts it under the same walls as the student's processes),
so whatever a script could do in it stays there.  Its Lua is Redis 7's and nothing of Python
(:func:`redis_course.core.compat.bare_fakeredis_lua`): no ``python`` table, no ``io``/``os``/``debug``, no
Python attribute of any object; and, as on Redis 7, its globals, its libraries (``redis``,
``string``, ``cjson``...) and the string metatable are read-only and ``setfenv``/``getfenv`` do not
exist (:data:`READONLY_LUA`), so no script can change what a later one -- the grader's own
included -- finds there.  ``--cluster``: refuse, as one node of a Redis Cluster does, a
command, transaction or script whose keys are in different hash slots (CROSSSLOT;
:func:`redis_course.core.compat.refuse_cross_slot`).  Cost: fakeredis's, one lock per server.
"""

from __future__ import annotations

import importlib
import os
import sys

BOOT = (
    "import sys; sys.path[:0] = sys.argv[1].split(':'); "
    "from redis_course.labs.sandbox.fakeserver import main; raise SystemExit(main(sys.argv[2:]))"
)


#: Run once in the EVAL runtime after fakeredis has set it up: Redis 7's read-only tables.  Every
#: global but KEYS and ARGV (set per call) moves behind a metatable that refuses writes; each table
#: among them is seen through a read-only proxy; ``rawset`` refuses those; the string metatable and
#: the proxies hide their metatables.  Redis 7 answers "Attempt to modify a readonly table" too.
READONLY_LUA = """
local G, raw_rawset, raw_setmetatable, raw_getmetatable, raw_pairs, raw_type, raw_error =
    _G, rawset, setmetatable, getmetatable, pairs, type, error
local protected = raw_setmetatable({}, {__mode = "k"})
local function refuse() raw_error("Attempt to modify a readonly table", 2) end
local function freeze(t)
  local proxy = raw_setmetatable({}, {__index = t, __newindex = refuse, __metatable = false})
  protected[proxy] = true
  return proxy
end
local backing = {}
for k, v in raw_pairs(G) do
  if k ~= "KEYS" and k ~= "ARGV" and k ~= "_G" then
    backing[k] = raw_type(v) == "table" and freeze(v) or v
  end
end
backing.setfenv, backing.getfenv = nil, nil
backing.rawset = function(t, k, v)
  if t == G or protected[t] then refuse() end
  return raw_rawset(t, k, v)
end
backing._G = G
for k in raw_pairs(backing) do raw_rawset(G, k, nil) end
G.setfenv, G.getfenv = nil, nil
local smt = raw_getmetatable("")
smt.__index = backing.string
smt.__metatable = false
raw_setmetatable(G, {__index = backing, __metatable = false, __newindex = function(t, k, v)
  if k == "KEYS" or k == "ARGV" then return raw_rawset(t, k, v) end
  refuse()
end})
protected[G] = true
"""


def readonly_fakeredis_lua() -> None:
    """fakeredis builds its EVAL runtime once per server (``_get_server_runtime``) and lets a script
    change any table in it; wrap that builder so the runtime is made read-only once built."""
    mixin = importlib.import_module("fakeredis.commands_mixins.scripting_mixin")
    cls = mixin.ScriptingCommandsMixin
    if getattr(cls._get_server_runtime, "_course_readonly", False):
        return
    build = cls._get_server_runtime

    def get_runtime(self, server):
        fresh = not hasattr(server, "_lua_runtime")
        runtime = build(self, server)
        if fresh:
            runtime.execute(READONLY_LUA)
        return runtime

    get_runtime._course_readonly = True  # type: ignore[attr-defined]
    cls._get_server_runtime = get_runtime


def make_server(path: str):
    from ...core.compat import bare_fakeredis_lua, unix_fake_server  # fakeredis's private parts: fenced there

    bare_fakeredis_lua()
    readonly_fakeredis_lua()
    return unix_fake_server(path)


def main(argv: list[str]) -> int:
    path, rest = argv[0], argv[1:]
    if "--cluster" in rest:
        from ...cluster.slots import key_slot
        from ...core.compat import refuse_cross_slot

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
