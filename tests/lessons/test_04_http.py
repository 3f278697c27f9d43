"""Lesson 04: the HTTP example answers 429 with Retry-After and the IETF RateLimit fields."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from redis_course.lessons import ratelimit as rl

T0 = 1_700_000_000_000
# draft-ietf-httpapi-ratelimit-headers: structured-field lists of items with parameters
POLICY = re.compile(r'^"per-ip";q=10;w=1$')
SERVICE = re.compile(r'^"per-ip";r=(\d+);t=(\d+)$')


@pytest.mark.parametrize("limiter", [rl.gcra, rl.fixed_window, rl.sliding_log], ids=lambda f: f.__name__)
def test_429_with_retry_after_and_ratelimit_fields(r, limiter):
    clock = {"now": T0 + 400}
    client = TestClient(rl.make_app(r, limiter=limiter, clock=lambda: clock["now"]))
    remaining = []
    for _ in range(10):
        response = client.get("/")
        assert response.status_code == 200 and response.json() == {"hello": "world"}
        assert POLICY.match(response.headers["RateLimit-Policy"])
        assert "Retry-After" not in response.headers
        remaining.append(int(SERVICE.match(response.headers["RateLimit"]).group(1)))
    assert remaining == list(range(9, -1, -1))

    denied = client.get("/")
    assert denied.status_code == 429
    retry_ms = denied.json()["retry_after_ms"]
    assert retry_ms > 0
    assert denied.headers["Retry-After"] == str(-(-retry_ms // 1000))
    r_param, t_param = map(int, SERVICE.match(denied.headers["RateLimit"]).groups())
    assert r_param == 0
    # the draft: Retry-After should not point earlier than the end of the effective window
    assert int(denied.headers["Retry-After"]) >= t_param >= 1

    clock["now"] += retry_ms - 1
    assert client.get("/").status_code == 429
    clock["now"] += 1
    assert client.get("/").status_code == 200


def test_server_clock_when_no_clock_is_given(r):
    client = TestClient(rl.make_app(r, limit=3, window_ms=60_000))
    codes = [client.get("/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert client.get("/").headers["RateLimit-Policy"] == '"per-ip";q=3;w=60'
    assert rl.keys_without_ttl(r) == []
