"""Lesson 07, watching it: the numbers vitals() reads on both backends (fakeredis has none of the
commands), each number moved on purpose on a private server, and the defaults that decide what the
slow log and the latency monitor record.
"""

from __future__ import annotations

import pytest

from redis_course.lessons import vitals as v
from redis_course.core.servers import private_redis, redis_server_binary, redis_server_version

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


def test_vitals_reads_every_number_on_redis_and_says_what_fakeredis_lacks(r, backend_url):
    out = v.vitals(r)
    if backend_url is None:
        assert out == {"missing": ["INFO", "SLOWLOG", "LATENCY"]}
        return
    assert out["missing"] == []
    for _section, name in v.FIELDS:
        assert out[name] is not None, name
    assert isinstance(out["errorstats"], dict) and isinstance(out["latency"], dict)
    assert out["slowlog_len"] >= 0 and out["maxclients"] > 0


@pytest.fixture(scope="module")
def provoked():
    if not redis_server_binary():
        pytest.skip("redis-server is not installed")
    with private_redis() as srv:
        yield v.defaults(srv), v.provoke(srv)


@needs_server
def test_the_slow_log_is_on_and_the_latency_monitor_off_by_default(provoked):
    defaults, _moved = provoked
    assert defaults == {
        "slowlog-log-slower-than": 10_000,
        "slowlog-max-len": 128,
        "latency-monitor-threshold": 0,
        "maxclients": 10_000,
    }


@needs_server
def test_each_number_moves_when_its_cause_happens(provoked):
    _defaults, moved = provoked
    assert moved["hits, misses"] == (3, 2)
    assert moved["errorstats"] == {"WRONGTYPE": 1}
    assert moved["slowlog"] == ("DEBUG SLEEP", True)
    assert moved["latency"] == {"command": True}
    assert moved["over maxclients"] == "max number of clients reached"
    assert moved["rejected_connections"] == 1
    assert moved["evicted_keys"] > 0


@needs_server
def test_a_new_redis_py_connection_adds_err_replies_before_redis_7_2(provoked):
    _defaults, moved = provoked
    major, minor = (int(x) for x in (redis_server_version() or "0.0").split(".")[:2])
    old = (major, minor) < (7, 2)
    assert moved["errors from a new connection, RESP2"] == ({"ERR": 2} if old else {})
    if old:
        assert moved["errors from a new connection, RESP3"] == {"ERR": 3}
