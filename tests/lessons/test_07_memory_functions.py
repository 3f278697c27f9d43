"""Lesson 07, when Redis fills up and how scripts ship: every eviction policy on a private server
with a small maxmemory, a limiter whose key is evicted, Redis Functions on fakeredis and on a
private server (the lesson never loads a library on a server it does not own: a library is not a
key and would stay there), what survives a restart and a failover, and what fakeredis lacks.
"""

from __future__ import annotations

import secrets

import pytest
import redis

from redis_course import connect
from redis_course.lessons import eviction as ev
from redis_course.lessons import functions as fn
from redis_course.lessons import ratelimit as rl
from redis_course.core.servers import private_redis, redis_server_binary

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")
T = 1_700_000_000_000


@pytest.fixture(scope="module")
def server():
    if not redis_server_binary():
        pytest.skip("redis-server is not installed")
    with private_redis() as srv:
        yield srv


# ---------------------------------------------------------------------- maxmemory


def test_noeviction_keeps_every_key_and_refuses_every_new_write(server):
    got = ev.overflow(server, "noeviction", new=500)
    assert (got["counters_left"], got["limiter_keys_left"], got["evicted"]) == (500, 500, 0)
    assert got["failed_writes"] == 1000  # INCR of a new counter is refused too


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-random"])
def test_allkeys_policies_evict_counters_and_never_refuse(server, policy):
    got = ev.overflow(server, policy, new=1000)
    assert got["failed_writes"] == 0 and got["evicted"] > 0
    assert got["counters_left"] < 500  # totals without a TTL are gone


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-ttl"])
def test_volatile_policies_evict_only_keys_with_a_ttl(server, policy):
    got = ev.overflow(server, policy, new=1000)
    assert got["counters_left"] == 500
    assert got["limiter_keys_left"] < 500 and got["evicted"] > 0


def test_volatile_policies_evict_dated_counters_too_only_volatile_ttl_spares_them(server):
    dated = dict(new=1500, counter_ttl_s=3 * 86_400, new_counters=False)  # traffic: new limiter keys only
    lru = ev.overflow(server, "volatile-lru", **dated)
    assert lru["counters_left"] < 250  # a retention TTL makes a counter evictable
    ttl = ev.overflow(server, "volatile-ttl", **dated)
    assert ttl["counters_left"] > 400  # the shortest TTL goes first (among samples)


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-lru"])
def test_below_what_the_server_uses_every_policy_refuses_writes(server, policy):
    assert ev.tiny_maxmemory(server, policy) == "OutOfMemoryError"


def test_at_maxmemory_a_script_without_flags_writes_once_it_has_written(server):
    got = fn.at_maxmemory(server)
    assert got == {
        "script, no flags, a write first": "OK",
        "script, no flags, a read first": "OutOfMemoryError",
        "script, no flags, TIME then a write": "OK",  # the 07 page: the semaphore's acquire writes
        "script, #!lua (no flags)": "OutOfMemoryError",
        "script, #!lua flags=no-writes": "OK",
        "function, no flags": "OutOfMemoryError",
    }


def test_an_evicted_limiter_key_lets_a_denied_client_through(server):
    assert ev.evicted_limit_resets(server, "volatile-ttl") == {
        "allowed_before": False,
        "key_survived": False,
        "allowed_after": True,
    }
    assert ev.evicted_limit_resets(server, "noeviction") == {
        "allowed_before": False,
        "key_survived": True,
        "allowed_after": False,
    }


def test_a_read_only_function_runs_when_writes_are_refused(server):
    c = server.client(prefix="oom:")
    c.flushall()
    c.config_set("maxmemory-policy", "noeviction")
    fn.load(c)
    fn.gcra(c, "k", now_ms=T)
    c.config_set("maxmemory", 1)
    try:
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            fn.gcra(c, "k", now_ms=T)
        tat, pttl = fn.fcall(c, "course_peek", [c.key("rl", "gcra", "k")], read_only=True)
        assert int(tat) > T * 1000 and pttl > 0
    finally:
        c.config_set("maxmemory", 0)


# ---------------------------------------------------------------------- functions


@pytest.fixture(params=["fakeredis", "redis-server"])
def owned(request):
    """A client on a server the course owns: a fresh fakeredis, or a private redis-server."""
    prefix = f"course:test:{secrets.token_hex(4)}:"
    if request.param == "fakeredis":
        yield connect("", prefix=prefix)
        return
    if not redis_server_binary():
        pytest.skip("redis-server is not installed")
    with private_redis() as srv:
        yield srv.client(prefix=prefix)


def test_the_function_decides_exactly_as_the_script(owned):
    assert fn.load(owned) == "course_limits" and fn.libraries(owned) == ["course_limits"]
    times = [T + 37 * i for i in range(40)]
    assert [fn.gcra(owned, "a", now_ms=t) for t in times] == [rl.gcra(owned, "b", now_ms=t) for t in times]


def test_fcall_loads_the_library_when_the_server_lacks_it(owned):
    owned.execute_command("FUNCTION", "DELETE", "course_limits") if fn.libraries(owned) else None
    assert fn.gcra(owned, "a", now_ms=T).allowed and fn.libraries(owned) == ["course_limits"]


def test_a_writing_function_is_refused_by_fcall_ro_and_loading_twice_needs_replace(owned):
    fn.load(owned)
    with pytest.raises(redis.exceptions.ResponseError, match="write flag"):
        fn.fcall(owned, "course_gcra", [owned.key("k")], T, 10, 1000, read_only=True)
    with pytest.raises(redis.exceptions.ResponseError, match="already exists"):
        owned.execute_command("FUNCTION", "LOAD", fn.LIBRARY_LUA)


@needs_server
@pytest.mark.parametrize("mode, function", [("none", False), ("rdb", True), ("aof-everysec", True), ("failover", True)])
def test_functions_persist_and_replicate_scripts_do_not(mode, function):
    assert fn.what_survives(mode) == {"function": function, "script": False}


# ---------------------------------------------------------------------- what fakeredis lacks


@pytest.mark.parametrize(
    "command",
    [
        ("EVAL_RO", "return redis.call('GET', KEYS[1])", 1, "k"),
        ("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", 1, "k"),
    ],
)
def test_fakeredis_lacks_read_only_eval_and_script_flags_which_redis_7_has(owned, command):
    if owned.is_fake:
        with pytest.raises(redis.exceptions.ResponseError):
            owned.execute_command(*command)
    else:
        assert owned.execute_command(*command) is None


@needs_server
def test_a_no_writes_function_runs_on_a_read_only_replica_and_a_writing_one_is_refused():
    from redis_course.lessons.switchover import primary_and_replica

    with primary_and_replica() as (primary, replica):
        p, rep = primary.client(prefix="rep:"), replica.client(prefix="rep:")
        fn.load(p)
        fn.gcra(p, "k", now_ms=T)
        p.execute_command("WAIT", 1, 2000)
        tat, pttl = fn.fcall(rep, "course_peek", [rep.key("rl", "gcra", "k")], read_only=True)
        assert int(tat) > T * 1000 and pttl > 0
        with pytest.raises(redis.exceptions.ReadOnlyError):
            fn.gcra(rep, "k", now_ms=T)


def test_fakeredis_accepts_maxmemory_and_then_neither_evicts_nor_refuses():
    """The page runs eviction on a private redis-server: fakeredis says OK to CONFIG SET and ignores it."""
    c = connect("", prefix=f"course:test:{secrets.token_hex(4)}:")
    assert c.is_fake
    for policy in ("noeviction", "allkeys-lru"):
        assert c.execute_command("CONFIG", "SET", "maxmemory-policy", policy) in ("OK", True)
        assert c.execute_command("CONFIG", "SET", "maxmemory", 1000) in ("OK", True)
        for i in range(500):
            c.set(c.key(policy, i), "x" * 100, px=60_000)
        assert c.incr(c.key(policy, "count")) == 1  # no OOM under noeviction
        assert len([k for k in c.course_keys() if f":{policy}:" in k]) == 501  # nothing evicted
    with pytest.raises(redis.exceptions.ResponseError, match="unknown command"):
        c.execute_command("CONFIG", "GET", "maxmemory-policy")
