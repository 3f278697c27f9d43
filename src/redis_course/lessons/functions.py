"""Lesson 07: shipping scripts the Redis 7 way, Redis Functions against EVALSHA.

A **script** (EVAL/EVALSHA) lives in the server's script cache: it is not persisted, not
replicated (Redis 7 replicates a script's effects, not the script), and gone after a restart or a
failover; the client keeps the source and loads it again on NOSCRIPT.  A **function library**
(``FUNCTION LOAD``) is part of the dataset: saved in RDB and AOF, sent to replicas, called by name
with ``FCALL``.  Functions declare flags: ``no-writes`` lets ``FCALL_RO`` call them (also on a
read-only replica) and lets them run when the server is out of memory.

The library below holds lesson 04's GCRA (``course_gcra``) and a read-only ``course_peek``.
Function names are global on a server: prefix them with the library's name.
"""

from __future__ import annotations

import redis

from ..core.backend import CourseError
from ..l10n import _
from .ratelimit_lua import GCRA_LUA, Script

# --8<-- [start:library]
LIBRARY = "course_limits"
REPLICA_ACK_MS = 10_000  # how long a failover waits for the replica to acknowledge what it must keep

#: The library after its GCRA function: a read-only ``course_peek``, and both functions registered
#: under names that start with the library's, since function names are global on a server.
REGISTER_LUA = """
local function peek(KEYS, ARGV)
  -- the stored theoretical arrival time (us) and the key's TTL (ms); reads only
  return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
end

redis.register_function('course_gcra', gcra)
redis.register_function{function_name = 'course_peek', callback = peek, flags = {'no-writes'}}
"""

#: The whole library: its name on the first line, lesson 04's GCRA body unchanged as a function (the
#: script's KEYS and ARGV become the callback's two arguments), then the rest.
LIBRARY_LUA = f"#!lua name={LIBRARY}\nlocal function gcra(KEYS, ARGV)\n{GCRA_LUA}\nend\n" + REGISTER_LUA
# --8<-- [end:library]


def load(r, code: str = LIBRARY_LUA) -> str:
    """FUNCTION LOAD REPLACE: install or upgrade the library atomically (O(size of the code)).
    Callers in flight finish on the old version; the next FCALL runs the new one."""
    return r.execute_command("FUNCTION", "LOAD", "REPLACE", code)


def libraries(r) -> list[str]:
    """Names of the libraries on the server (FUNCTION LIST, O(number of functions)), whatever the
    reply's shape (a flat list in RESP2 on Redis, dicts from some clients)."""
    names = []
    for lib in r.execute_command("FUNCTION", "LIST"):
        if isinstance(lib, dict):
            names.append(lib.get("library_name"))
        else:
            names.append(dict(zip(lib[::2], lib[1::2])).get("library_name"))
    return sorted(names)


def fcall(r, function: str, keys: list[str], *args, read_only: bool = False):
    """FCALL (or FCALL_RO), loading the library once if the server does not have it: after a
    restart without persistence, on a new server, or on a replica promoted before it got it."""
    command = "FCALL_RO" if read_only else "FCALL"
    try:
        return r.execute_command(command, function, len(keys), *keys, *args)
    except redis.exceptions.ResponseError as exc:
        if "Function not found" not in str(exc):
            raise
        load(r)
        return r.execute_command(command, function, len(keys), *keys, *args)


def gcra(r, client_id: str, limit: int = 10, window_ms: int = 1000, now_ms: int | None = None):
    """Lesson 04's GCRA through FCALL: one round trip, O(1).  Same answer as ``ratelimit.gcra``."""
    from .ratelimit import Decision

    args = ("" if now_ms is None else int(now_ms), limit, window_ms)
    allowed, remaining, retry, reset = fcall(r, "course_gcra", [r.key("rl", "gcra", client_id)], *args)
    return Decision(allowed == 1, remaining, retry, reset)


def what_survives(mode: str) -> dict:
    """Load the library and a script on a private server, then restart it (``mode`` = a persistence
    setting of :mod:`redis_course.core.servers`) or fail over to a replica (``mode`` = "failover").
    Returns ``{"function": still there?, "script": still cached?}``."""
    from ..core.servers import PrivateRedis
    from .switchover import primary_and_replica

    script = Script(GCRA_LUA)
    if mode != "failover":
        with PrivateRedis(persistence=mode) as srv:
            c = srv.client(prefix="")
            load(c)
            c.script_load(script.text)
            srv.kill() if mode == "none" else srv.stop()  # SIGTERM saves an RDB when `save` is set
            srv.start()
            c = srv.client(prefix="")
            return {"function": LIBRARY in libraries(c), "script": c.script_exists(script.sha)[0]}
    with primary_and_replica() as (primary, replica):
        p, rep = primary.client(prefix=""), replica.client(prefix="")
        load(p)
        p.script_load(script.text)
        # the failover below must find what the replica has acknowledged, not what it may have had
        # time to receive: on a busy machine a second was seen to be too short
        if p.execute_command("WAIT", 1, REPLICA_ACK_MS) < 1:
            raise CourseError(_("The replica did not acknowledge the library within {ms} ms.", ms=REPLICA_ACK_MS))
        primary.kill()
        rep.execute_command("REPLICAOF", "NO", "ONE")  # the failover
        return {"function": LIBRARY in libraries(rep), "script": rep.script_exists(script.sha)[0]}


#: Five ways to run the same write at ``maxmemory`` under ``noeviction``: what Redis 7 does with each.
OOM_CASES = {
    "script, no flags, a write first": "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', 0)\n"
    "return redis.call('ZADD', KEYS[1], 1, ARGV[1])",
    "script, no flags, a read first": "redis.call('TIME')\nreturn redis.call('ZADD', KEYS[1], 1, ARGV[1])",
    # what the semaphore's acquire does under the server's clock: TIME, then its first write frees
    "script, no flags, TIME then a write": "redis.call('TIME')\nredis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', 0)\n"
    "return redis.call('ZADD', KEYS[1], 1, ARGV[1])",
    "script, #!lua (no flags)": "#!lua\nredis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', 0)\n"
    "return redis.call('ZADD', KEYS[1], 1, ARGV[1])",
    "script, #!lua flags=no-writes": "#!lua flags=no-writes\nreturn redis.call('ZCARD', KEYS[1])",
}


def at_maxmemory(srv) -> dict[str, str]:
    """On the private server ``srv`` under ``noeviction`` with ``maxmemory`` below what it uses: each
    of :data:`OOM_CASES` by EVAL, and the library's writing ``course_gcra`` by FCALL.  Returns
    ``{case: "OK" or the error's class}``.

    A script without a ``#!lua`` line is checked for OOM only until it has run a write (Redis 7.0):
    one that starts with ZREMRANGEBYSCORE then writes past ``maxmemory``.  A ``#!lua`` line
    (without ``allow-oom``) or a function without flags is refused before it runs.
    """
    c = srv.client(prefix="")
    c.config_set("maxmemory", 0)
    c.flushall()
    c.config_set("maxmemory-policy", "noeviction")
    load(c)
    out = {}
    c.config_set("maxmemory", 1)
    try:
        for case, code in OOM_CASES.items():
            try:
                c.eval(code, 1, f"oom:{len(out)}", "m")
                out[case] = "OK"
            except redis.exceptions.OutOfMemoryError as exc:
                out[case] = type(exc).__name__
        try:
            fcall(c, "course_gcra", ["oom:gcra"], "", 10, 1000)
            out["function, no flags"] = "OK"
        except redis.exceptions.OutOfMemoryError as exc:
            out["function, no flags"] = type(exc).__name__
    finally:
        c.config_set("maxmemory", 0)
    return out
