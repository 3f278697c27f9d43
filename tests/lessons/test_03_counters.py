"""Lesson 03: the fault injection its lab relies on, and claims of the lesson that no transcript shows.

Each test runs on fakeredis and on the real server (the ``r`` fixture).
"""

from __future__ import annotations

import time

import pytest

from redis_course.cluster import default_primary, key_slot
from redis_course.lessons import faults
from redis_course.core.servers import private_redis, redis_server_binary


@pytest.fixture
def crash(r):
    """arm_crash bound to this client; always disarmed afterwards."""
    yield lambda n: faults.arm_crash(r, n)
    faults.arm_crash(r, None)


def two_round_trips(r, key):
    n = r.incr(key)
    if n == 1:
        r.pexpire(key, 60_000)
    return n


def one_round_trip(r, key):
    with r.pipeline(transaction=True) as p:
        p.incr(key)
        p.pexpire(key, 60_000, nx=True)
        return p.execute()[0]


def test_crash_after_one_round_trip_leaves_the_key_without_ttl(r, crash):
    key = r.key("c")
    crash(1)
    with pytest.raises(faults.SimulatedCrash):
        two_round_trips(r, key)
    faults.arm_crash(r, None)
    assert r.get(key) == "1"
    assert r.pttl(key) == -1


def test_a_transaction_is_one_round_trip(r, crash):
    key = r.key("c")
    crash(1)
    assert one_round_trip(r, key) == 1
    with pytest.raises(faults.SimulatedCrash):  # the budget is spent: the process is dead
        one_round_trip(r, key)
    faults.arm_crash(r, None)
    assert one_round_trip(r, key) == 2
    assert r.pttl(key) > 0


def test_a_pipeline_without_multi_is_cut_by_a_crash(r, crash):
    """Redis runs a pipeline's commands one by one: armed, the crash may fall between them."""
    key = r.key("c")
    crash(1)
    with pytest.raises(faults.SimulatedCrash):
        with r.pipeline(transaction=False) as p:
            p.incr(key)
            p.pexpire(key, 60_000, nx=True)
            p.execute()
    faults.arm_crash(r, None)
    assert r.get(key) == "1"
    assert r.pttl(key) == -1


def test_a_pipeline_without_multi_still_answers_every_command(r, crash):
    key = r.key("c")
    crash(10)
    with r.pipeline(transaction=False) as p:
        p.incr(key)
        p.get(r.key("missing"))
        p.incrby(key, 4)
        assert p.execute() == [1, None, 5]
    with r.pipeline(transaction=False) as p:
        p.lpush(key, "x")  # WRONGTYPE: raised after every command ran, as without the fault
        p.incr(key)
        with pytest.raises(Exception, match="WRONGTYPE"):
            p.execute()
    assert r.get(key) == "6"


def test_crash_before_anything_is_sent(r, crash):
    crash(0)
    with pytest.raises(faults.SimulatedCrash):
        r.incr(r.key("c"))
    faults.arm_crash(r, None)
    assert r.exists(r.key("c")) == 0


def test_lua_with_noscript_retry_counts_once(r, crash):
    script = r.register_script("return redis.call('INCR', KEYS[1])")
    key = r.key("lua")
    crash(1)  # the first EVALSHA answers NOSCRIPT (not counted), SCRIPT LOAD names no key, EVALSHA runs
    assert script(keys=[key]) == 1
    with pytest.raises(faults.SimulatedCrash):
        script(keys=[key])


def test_round_trips_on_other_keys_do_not_count(r, crash):
    crash(0)
    assert r.ping() is True
    assert r.get("not-a-course-key-" + r.prefix.strip(":")) is None


def test_machine_timezone_changes_the_local_date():
    from datetime import datetime, timezone

    ts = datetime(2026, 5, 1, 23, 30, tzinfo=timezone.utc).timestamp()
    try:
        faults.set_machine_timezone(None, "Asia/Tokyo")
        assert datetime.fromtimestamp(ts).date().isoformat() == "2026-05-02"
        faults.set_machine_timezone(None, "America/New_York")
        assert datetime.fromtimestamp(ts).date().isoformat() == "2026-05-01"
        assert datetime.fromtimestamp(ts, timezone.utc).date().isoformat() == "2026-05-01"
    finally:
        faults.set_machine_timezone(None, None)


def test_a_queued_transaction_dies_with_its_connection(r):
    """The page says: a client that dies before EXEC leaves nothing behind."""
    key = r.key("tx")
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("MULTI")
        assert conn.read_response() in ("OK", b"OK", True)
        conn.send_command("INCR", key)
        assert conn.read_response() in ("QUEUED", b"QUEUED")
    finally:
        conn.disconnect()
        r.connection_pool.release(conn)
    time.sleep(0.05)
    assert r.exists(key) == 0


def test_getset_drops_the_ttl_and_set_keepttl_get_keeps_it(r):
    key = r.key("pending")
    r.set(key, 10, px=60_000)
    assert r.set(key, 0, keepttl=True, get=True) == "10"
    assert r.pttl(key) > 0
    assert r.getset(key, 0) == "0"
    assert r.pttl(key) == -1


@pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")
def test_a_hyperloglog_is_12304_bytes_that_memory_usage_counts_as_about_14_kb():
    with private_redis() as srv:
        c = srv.client(prefix="")
        c.pfadd("hll", *[f"visitor:{i}" for i in range(20_000)])
        c.set("str", "x" * 12_304)
        assert c.strlen("hll") == 12_304 == 16 + 16_384 * 6 // 8  # header + 6-bit registers
        hll, plain = c.memory_usage("hll", samples=0), c.memory_usage("str", samples=0)
    assert hll == plain  # the same cost as any 12,304-byte string
    assert 14_336 < hll < 14_336 + 100  # jemalloc's size class plus the key's overhead


def test_hash_tags_put_a_week_of_daily_keys_into_one_slot():
    days = [f"2026-05-{d:02d}" for d in range(1, 8)]
    assert len({key_slot(f"views:post:17:{d}") for d in days}) == 7
    assert len({key_slot(f"views:{{post:17}}:{d}") for d in days}) == 1
    # the page's example: two days in two slots that the course cluster's first primary both owns
    a, b = key_slot("views:post:17:2026-05-03"), key_slot("views:post:17:2026-05-07")
    assert (a, b, key_slot("views:{post:17}:2026-05-07")) == (1471, 1339, 6110)
    assert default_primary(a) == default_primary(b) == 0
