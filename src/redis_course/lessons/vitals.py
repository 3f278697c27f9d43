"""Lesson 07: the few numbers to watch on a Redis that counts and limits, and how each one moves.

:func:`vitals` reads them from any client: ``INFO`` (stats, clients, memory, errorstats,
replication), ``SLOWLOG LEN`` and ``LATENCY LATEST``, all read-only, so it runs on your server too.
fakeredis has none of these commands: :func:`vitals` then lists them under ``"missing"``.

:func:`provoke` moves each number on purpose on a private server (``CONFIG SET``, ``DEBUG SLEEP``)
and returns how much it moved: keyspace hits and misses, an error reply, a slow command in the slow
log and the latency monitor, a connection refused at ``maxclients``, keys evicted at ``maxmemory``,
and the errors a new redis-py connection itself adds: redis-py 8's handshake sends ``CLIENT SETINFO``
twice (and on RESP3 ``CLIENT MAINT_NOTIFICATIONS``), which Redis before 7.2 does not know, so every
new connection adds two ``ERR`` (three on RESP3): an alert on ``errorstat_ERR`` must expect them.
"""

from __future__ import annotations

import contextlib

import redis

#: (INFO section, field): what to read, and why it matters is on the lesson page.
FIELDS = (
    ("stats", "rejected_connections"),
    ("stats", "evicted_keys"),
    ("stats", "expired_keys"),
    ("stats", "keyspace_hits"),
    ("stats", "keyspace_misses"),
    ("stats", "total_error_replies"),
    ("stats", "instantaneous_ops_per_sec"),
    ("clients", "connected_clients"),
    ("clients", "blocked_clients"),
    ("clients", "maxclients"),
    ("memory", "used_memory"),
    ("memory", "maxmemory"),
    ("memory", "maxmemory_policy"),
    ("replication", "role"),
    ("replication", "connected_slaves"),
)


def vitals(r) -> dict:
    """The numbers, by field name; ``errorstats`` (error prefix → count), ``slowlog_len``,
    ``latency`` (event → latest ms) and ``missing`` (the commands this server does not know)."""
    out: dict = {"missing": []}
    try:
        info = {section: r.info(section) for section in {s for s, _f in FIELDS} | {"errorstats"}}
    except redis.exceptions.ResponseError:
        out["missing"].append("INFO")
        info = None
    if info is not None:
        for section, name in FIELDS:
            out[name] = info[section].get(name)
        out["errorstats"] = {k.removeprefix("errorstat_"): v["count"] for k, v in info["errorstats"].items()}
    try:
        out["slowlog_len"] = int(r.execute_command("SLOWLOG", "LEN"))
    except redis.exceptions.ResponseError:
        out["missing"].append("SLOWLOG")
    try:
        out["latency"] = {_text(e[0]): int(e[2]) for e in r.execute_command("LATENCY", "LATEST")}
    except redis.exceptions.ResponseError:
        out["missing"].append("LATENCY")
    return out


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _moved(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in after if isinstance(after.get(k), int) and isinstance(before.get(k), int)}


def provoke(srv) -> dict:
    """Move every number once on the private server ``srv`` and return what moved."""
    admin = srv.client(prefix="")
    c = srv.client(prefix="course:vitals:")
    out: dict = {}
    admin.config_set("slowlog-log-slower-than", 10_000)  # µs: the default, 10 ms
    admin.config_set("latency-monitor-threshold", 20)  # ms: off (0) by default
    admin.execute_command("SLOWLOG", "RESET")
    admin.execute_command("LATENCY", "RESET")

    c.ping()  # c's connection is open before we look
    before = vitals(admin)
    c.set("k", 1)
    for _ in range(3):
        c.get("k")
    for _ in range(2):
        c.get("absent")
    with contextlib.suppress(redis.exceptions.ResponseError):
        c.lpush("k", "x")  # WRONGTYPE
    after = vitals(admin)
    out["hits, misses"] = (
        after["keyspace_hits"] - before["keyspace_hits"],
        after["keyspace_misses"] - before["keyspace_misses"],
    )
    out["errorstats"] = {
        k: n - before["errorstats"].get(k, 0)
        for k, n in after["errorstats"].items()
        if n != before["errorstats"].get(k, 0)
    }

    admin.execute_command("DEBUG", "SLEEP", "0.05")  # one command that takes 50 ms
    entry = admin.slowlog_get(1)[0]
    out["slowlog"] = (
        " ".join(_text(a) for a in entry["command"].split()[:2])
        if isinstance(entry["command"], (bytes, str))
        else entry["command"],
        entry["duration"] >= 50_000,
    )
    out["latency"] = {event: ms >= 50 for event, ms in vitals(admin)["latency"].items()}

    for protocol in (2, 3):
        before = vitals(admin)["errorstats"]
        fresh = redis.Redis.from_url(srv.url, socket_timeout=2, socket_connect_timeout=2, protocol=protocol)
        fresh.ping()  # a new redis-py connection, nothing else
        fresh.close()
        out[f"errors from a new connection, RESP{protocol}"] = {
            k: n - before.get(k, 0) for k, n in vitals(admin)["errorstats"].items() if n != before.get(k, 0)
        }

    before = vitals(admin)
    admin.config_set("maxclients", before["connected_clients"] + 1)
    try:
        one = redis.Redis.from_url(srv.url, socket_timeout=2, socket_connect_timeout=2)
        one.ping()  # takes the last place
        two = redis.Redis.from_url(srv.url, socket_timeout=2, socket_connect_timeout=2)
        try:
            two.ping()
            out["over maxclients"] = "ok"
        except redis.exceptions.ConnectionError as exc:
            out["over maxclients"] = str(exc)
        out["rejected_connections"] = vitals(admin)["rejected_connections"] - before["rejected_connections"]
        for x in (one, two):
            x.close()
    finally:
        admin.config_set("maxclients", 10_000)

    before = vitals(admin)
    admin.config_set("maxmemory-policy", "allkeys-lru")
    admin.config_set("maxmemory", before["used_memory"] + 200_000)
    try:
        with c.pipeline(transaction=False) as p:
            for i in range(5_000):
                p.set(f"fill:{i}", "x" * 100)
            p.execute()
        after = vitals(admin)
        out["evicted_keys"] = after["evicted_keys"] - before["evicted_keys"]
    finally:
        admin.config_set("maxmemory", 0)
    return out


def defaults(srv) -> dict:
    """The settings that decide what the slow log, the latency monitor and maxclients record."""
    admin = srv.client(prefix="")
    names = ("slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold", "maxclients")
    return {n: int(admin.config_get(n)[n]) for n in names}
