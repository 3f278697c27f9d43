"""Lesson 07, connections: a full pool (plain and blocking, on both backends) and what the guard
answers, a budget client's bounded pool inside the deadline, one client per process against a
client per request, health checks, and the connect timeout that socket_timeout does not set.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

from redis_course.lessons import guard as g
from redis_course.lessons import pools
from redis_course.core.servers import private_redis, redis_server_binary

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


def test_a_full_pool_is_answered_by_the_policy_and_leaves_the_breaker_closed(r):
    out = pools.exhausted(r, size=2, wait_ms=50)
    plain, blocking = out["ConnectionPool"], out["BlockingConnectionPool"]
    assert (plain["error"], plain["message"]) == ("MaxConnectionsError", "Too many connections")
    assert plain["waited_ms"] < 40  # at once
    assert (blocking["error"], blocking["message"]) == ("ConnectionError", "No connection available.")
    assert 45 <= blocking["waited_ms"] < 1000  # its timeout, then the error
    for x in (plain, blocking):
        assert x["verdict"].source == "closed" and x["breaker"] == "closed"
    assert out["defaults"] == {
        "ConnectionPool.max_connections": 100,
        "BlockingConnectionPool.max_connections": 50,
        "BlockingConnectionPool.timeout": 20,
        "socket_timeout": 5,
        "socket_connect_timeout": 5,
        "health_check_interval": 0,
    }


def test_only_a_full_pool_counts_as_pool_exhausted():
    E = redis.exceptions
    assert g.pool_exhausted(E.MaxConnectionsError("Too many connections"))
    assert g.pool_exhausted(E.ConnectionError("No connection available."))
    assert not g.pool_exhausted(E.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."))
    assert not g.pool_exhausted(E.TimeoutError("Timeout reading from socket"))


@needs_server
def test_a_bounded_budget_pool_waits_only_what_is_left_of_the_deadline():
    with private_redis() as srv:
        fast = g.budget_client(srv.client(prefix="course:pool:"), 500, max_connections=1)
        assert fast.ping()
        held = fast.connection_pool.get_connection()  # the only connection, busy elsewhere
        guard = g.Guard(lambda: fast.incr(fast.key("n")), "open", budget_ms=40)
        started = time.monotonic()
        verdict = guard()
        waited = time.monotonic() - started
        assert verdict == g.Verdict(True, "open", "ConnectionError") and guard.breaker.state == "closed"
        assert waited < 0.3  # the 40 ms deadline, not the pool's 500 ms
        fast.connection_pool.release(held)
        assert guard().source == "redis"
        fast.close()


@needs_server
def test_a_bounded_budget_pool_hands_a_freed_connection_to_a_waiter():
    with private_redis() as srv:
        fast = g.budget_client(srv.client(prefix="course:pool:"), 500, max_connections=1)
        held = fast.connection_pool.get_connection()
        threading.Timer(0.05, fast.connection_pool.release, args=(held,)).start()
        assert fast.incr(fast.key("n")) == 1  # waited for the freed connection
        fast.close()


@needs_server
def test_one_client_per_process_keeps_one_connection_a_client_per_request_opens_one_each():
    with private_redis() as srv:
        out = pools.warm_or_per_request(srv, calls=20)
    assert out["one client per process"]["connections"] == 1
    assert out["a client per request"]["connections"] == 20


@needs_server
def test_health_check_pings_only_an_idle_connection_and_a_closed_one_is_replaced():
    with private_redis() as srv:
        out = pools.health_check(srv, interval_s=1)
    assert out["health_check_interval=0"] == {"pings_when_busy": 0, "pings_after_idle": 0}
    assert out["health_check_interval=1"] == {"pings_when_busy": 0, "pings_after_idle": 1}
    assert out["closed by the server, next command"] == "ok" and out["new connections"] >= 1


def test_socket_timeout_does_not_bound_the_connect():
    out = pools.connect_timeout(socket_timeout_s=0.2, connect_timeout_s=0.2, patience_s=1.0)
    alone, both = out["socket_timeout"], out["socket_timeout + socket_connect_timeout"]
    assert alone["connect_timeout_s"] == 5 and alone["error"] == "TimeoutError" and alone["waited_s"] >= 0.9
    assert both["connect_timeout_s"] == 0.2 and both["error"] == "TimeoutError" and both["waited_s"] < 0.8
