"""Lesson 07, hot keys: where one global key and its shards land on a cluster, a global limit split
over shards and pre-aggregated per process (on both backends), and LFU's view of a hot key, which
needs an LFU policy (a private server; fakeredis has no OBJECT).
"""

from __future__ import annotations

import secrets

import pytest
import redis

from redis_course.cluster.nodes import redis_cli_binary
from redis_course import connect
from redis_course.lessons import hotkeys as h
from redis_course.core.servers import private_redis, redis_server_binary

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


def test_one_key_is_one_slot_on_one_primary_and_its_shards_spread(r):
    out = h.placement(r, shards=16, primaries=3)
    assert out["one key"] == {"slots": 1, "primaries": 1}
    assert out["16 shards"] == {"slots": 16, "primaries": 3}


# a run's prefix under which shards named 0 .. 15 shared slots (found by search), and random ones
PREFIXES = ["course:nbt350e3031:", *(f"course:nbt{secrets.token_hex(4)}:" for _ in range(50))]


def test_the_shards_land_in_sixteen_slots_whatever_the_prefix():
    """The notebook's real-server run has a random prefix: its placement must be the stored one."""
    for prefix in PREFIXES:
        r = connect("", prefix=prefix)  # fakeredis: placement makes no round trip
        assert h.placement(r)["16 shards"] == {"slots": 16, "primaries": 3}, prefix


@pytest.mark.parametrize("requests", [2000, 1100])
def test_a_sharded_limit_spreads_the_load_and_admits_a_little_less(r, requests):
    out = h.sharded_window(r, f"w{requests}", requests, limit=1000, shards=16)
    one, sharded = out["one key"], out["16 shards"]
    assert one["admitted"] == 1000 and one["busiest key"] == 1.0
    assert sharded["sum of shards"] == requests  # every hit counted, summed by pipeline
    assert sharded["busiest key"] < 0.15  # no key takes the traffic
    assert sharded["admitted"] <= 16 * (1000 // 16) < 1000  # shard limits round down
    if requests == 1100:  # uneven shards: denied while others have room
        assert sharded["admitted"] < 16 * (1000 // 16)


def test_local_batching_cuts_round_trips_overshoots_within_its_bound_and_a_crash_loses_the_unsent(r):
    out = h.batched_window(r, "b", requests=2000, limit=1000, processes=4, batch=50)
    assert out["round trips"] <= 2000 // 50 + 4
    assert 0 < out["over the limit"] <= out["bound (N - 1) * batch"] == 150
    assert out["total in Redis"] == out["admitted"]
    assert out["crash: lost"] > 0
    assert out["crash: in Redis"] + out["crash: lost"] == out["crash: counted"]


def test_object_freq_is_real_redis_only(r, backend_url):
    r.set(r.key("hot", "k"), 1)
    if backend_url is not None and "lfu" in r.config_get("maxmemory-policy")["maxmemory-policy"]:
        assert r.execute_command("OBJECT", "FREQ", r.key("hot", "k")) >= 0
        return
    with pytest.raises(redis.exceptions.ResponseError) as exc:
        r.execute_command("OBJECT", "FREQ", r.key("hot", "k"))
    if backend_url is None:
        assert "unknown command" in str(exc.value)
    else:
        assert str(exc.value).startswith("An LFU maxmemory policy is not selected")


@needs_server
@pytest.mark.skipif(not redis_cli_binary(), reason="redis-cli is not installed")
def test_hot_keys_are_found_only_under_an_lfu_policy():
    with private_redis() as srv:
        out = h.lfu_view(srv, hits=300)
    assert out["OBJECT FREQ, noeviction"] == "An LFU maxmemory policy is not selected"
    assert "LFU maxmemory policy is not selected" in out["--hotkeys, noeviction"]
    assert 0 < out["OBJECT FREQ, allkeys-lfu"] < 300  # a logarithmic counter, not a count
    assert out["--hotkeys, allkeys-lfu"][0] == "hot"


def test_one_batching_process_decides_from_the_total_plus_its_own_unsent_count(r):
    out = h.batched_window(r, "one", requests=2000, limit=1000, processes=1, batch=30)
    assert (out["admitted"], out["over the limit"], out["total in Redis"]) == (1000, 0, 1000)
