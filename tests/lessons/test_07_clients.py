"""Lesson 07, choosing what to limit and what clients do: the key a request counts under (API key,
IP, IPv6 /64, X-Forwarded-For only from your proxies), shadow mode, and retries with and without
jitter through a limiter in simulated time (on fakeredis and on the real server).
"""

from __future__ import annotations

import random

import pytest

from redis_course.lessons import backoff as bo
from redis_course.lessons import identity as ident
from redis_course.lessons import ratelimit as rl

PROXIES = ["10.0.0.0/8"]


@pytest.mark.parametrize(
    "ip, unit",
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:7:1::1", "2001:db8:7:1::/64"),
        ("2001:db8:7:1:ffff:1234:5678:9abc", "2001:db8:7:1::/64"),
        ("2001:db8:7:2::1", "2001:db8:7:2::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
    ],
)
def test_ipv6_counts_by_its_64(ip, unit):
    assert ident.network_of(ip) == unit


def test_rotating_through_a_64_does_not_escape_the_limit(r):
    rng = random.Random(1)
    addrs = [f"2001:db8:7:1:{rng.randrange(65536):x}:{rng.randrange(65536):x}::1" for _ in range(50)]
    by_address = sum(rl.gcra(r, a, now_ms=0).allowed for a in addrs)
    by_network = sum(rl.gcra(r, ident.network_of(a), now_ms=0).allowed for a in addrs)
    assert (by_address, by_network) == (50, 10)


@pytest.mark.parametrize(
    "peer, xff, want",
    [
        ("198.51.100.9", "1.2.3.4", "198.51.100.9"),  # not our proxy: its header is ignored
        ("10.0.0.5", "203.0.113.7", "203.0.113.7"),  # our proxy says who connected to it
        ("10.0.0.5", "1.2.3.4, 203.0.113.7", "203.0.113.7"),  # the client wrote 1.2.3.4 itself
        ("10.0.0.5", "203.0.113.7, 10.0.0.9", "203.0.113.7"),  # two of our proxies
        ("10.0.0.5", "10.0.0.8, 10.0.0.9", "10.0.0.8"),  # only proxies: the leftmost
        ("10.0.0.5", "garbage, 203.0.113.7", "203.0.113.7"),
        ("10.0.0.5", "203.0.113.7, garbage", "10.0.0.5"),  # our proxy never writes garbage
        ("10.0.0.5", None, "10.0.0.5"),
    ],
)
def test_forwarded_for_is_read_from_the_right_and_only_from_our_proxies(peer, xff, want):
    assert ident.client_ip(peer, xff, PROXIES) == want


def test_a_spoofed_header_escapes_the_naive_key_not_the_right_one(r):
    naive, right = 0, 0
    for i in range(30):  # one client behind our proxy, writing a new address into the header each time
        xff = f"192.0.2.{i}, 203.0.113.7"
        naive += rl.gcra(r, ident.naive_client_ip("10.0.0.5", xff), now_ms=0).allowed
        right += rl.gcra(r, ident.limit_key(None, "10.0.0.5", xff, PROXIES), now_ms=0).allowed
    assert (naive, right) == (30, 10)


def test_an_api_key_wins_over_the_address():
    assert ident.limit_key("k-42", "10.0.0.5", "203.0.113.7", PROXIES) == "key:k-42"
    assert ident.limit_key(None, "10.0.0.5", "203.0.113.7", PROXIES) == "ip:203.0.113.7"


def test_shadow_mode_allows_everything_and_counts_who_would_be_denied(r):
    said = [bo.shadow(r, rl.gcra, "tenant-a", "2026-05-01", now_ms=0) for _ in range(14)]
    bo.shadow(r, rl.gcra, "tenant-b", "2026-05-01", now_ms=0)
    assert said.count(False) == 4
    assert r.hgetall(r.key("shadow", "2026-05-01")) == {"tenant-a": "4"}
    assert 0 < r.ttl(r.key("shadow", "2026-05-01")) <= 8 * 86400


def test_retry_delays():
    rng = random.Random(3)
    assert [bo.retry_delay_ms(a, None, rng, jitter=False) for a in range(4)] == [100, 200, 400, 800]
    assert bo.retry_delay_ms(9, None, rng, jitter=False) == 10_000
    assert bo.retry_delay_ms(2, 700, rng, jitter=False) == 700
    waits = [bo.retry_delay_ms(2, 700, rng) for _ in range(200)]
    assert min(waits) >= 700 and max(waits) <= 1100 and len(set(waits)) > 50


def test_jitter_breaks_the_waves_and_exact_retry_after_makes_a_herd(r):
    plain = bo.storm(r, jitter=False, use_retry_after=False)
    herd = bo.storm(r, jitter=False, use_retry_after=True)
    jittered = bo.storm(r, jitter=True, use_retry_after=True)
    assert plain["largest_wave"] >= 30 and herd["largest_wave"] >= 30
    assert jittered["largest_wave"] <= 15 and jittered["gave_up"] == 0
    assert herd["requests"] > 2 * jittered["requests"] and herd["gave_up"] > 0
    assert jittered["last_ms"] < plain["last_ms"]
