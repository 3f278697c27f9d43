"""Lesson 07, when Redis fails: the guard's policies and breaker (controlled clock, no server), a
budget client on a paused and on a stopped private redis-server, a timed-out INCR that still runs,
and redis-py's default retry that counts one request twice.

Times are compared with generous bounds (a paused server must not hold a caller for the 15 s of a
default socket timeout), never with what a fast machine would measure.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
import redis

from redis_course.lessons import guard as g
from redis_course.lessons import outage
from redis_course.lessons import ratelimit as rl
from redis_course.core.servers import private_redis, redis_server_binary

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def failing(calls: list):
    def decide():
        calls.append(1)
        raise redis.exceptions.ConnectionError("down")

    return decide


@pytest.mark.parametrize("policy, allowed", [("open", True), ("closed", False)])
def test_a_failure_is_answered_by_the_policy(policy, allowed):
    calls: list = []
    v = g.Guard(failing(calls), policy)()
    assert v == g.Verdict(allowed, policy, "ConnectionError") and calls == [1]


def test_an_answer_from_redis_is_passed_through():
    guard = g.Guard(lambda: rl.Decision(False, 0, 100, 100), "open")
    assert guard() == g.Verdict(False, "redis", None)


def test_the_breaker_skips_redis_until_the_cooldown_ends_then_probes_once():
    clock, calls = Clock(), []
    guard = g.Guard(failing(calls), "closed", breaker=g.Breaker(cooldown_ms=500, clock=clock))
    guard()
    for _ in range(10):
        assert guard().error == "breaker open"
    assert len(calls) == 1
    clock.t += 0.5
    guard()  # one probe, which fails: open again
    guard()
    assert len(calls) == 2
    guard.decide = lambda: True
    clock.t += 0.5
    assert guard() == g.Verdict(True, "redis", None) and guard.breaker.state == "closed"


def test_a_bug_in_the_limiter_is_not_hidden_by_the_policy():
    def buggy():
        raise redis.exceptions.ResponseError("wrong number of arguments for 'evalsha' command")

    with pytest.raises(redis.exceptions.ResponseError):
        g.Guard(buggy, "open")()


def test_local_fallback_counts_every_request_so_it_is_warm_when_redis_goes():
    clock = Clock()
    bucket = g.LocalBucket(10, 1000, clock=clock)
    state = {"up": True}

    def decide():
        if not state["up"]:
            raise redis.exceptions.TimeoutError("paused")
        return True

    guard = g.Guard(decide, "local", local=bucket, breaker=g.Breaker(0, clock=clock))
    for _ in range(30):  # 30 requests in the same instant, Redis answers
        assert guard().source == "redis"
    state["up"] = False
    assert [guard().allowed for _ in range(5)] == [False] * 5  # the bucket is empty, not full
    clock.t += 0.5  # half a second: 5 tokens
    assert sum(guard().allowed for _ in range(10)) == 5


def test_local_policy_needs_a_bucket_and_policies_are_checked():
    with pytest.raises(ValueError):
        g.Guard(lambda: True, "local")
    with pytest.raises(ValueError):
        g.Guard(lambda: True, "maybe")


@needs_server
def test_a_budget_client_gives_up_on_a_paused_server_and_a_guard_answers():
    with private_redis() as srv:
        r = g.budget_client(srv.client(prefix="t:"), 100)
        guard = g.Guard(lambda: rl.gcra(r, "k"), "closed")
        assert guard().source == "redis"
        os.killpg(srv.proc.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            v = guard()
            waited = time.monotonic() - started
        finally:
            os.killpg(srv.proc.pid, signal.SIGCONT)
        assert v == g.Verdict(False, "closed", "TimeoutError")
        assert waited < 5  # the default client would wait its 15 s socket timeout
        srv.kill()
        assert g.Guard(lambda: rl.gcra(r, "k"), "open")() == g.Verdict(True, "open", "ConnectionError")


@needs_server
def test_a_timed_out_incr_still_runs_when_the_server_resumes():
    got = outage.timed_out_incr_runs_later()
    assert got == {"answer": "TimeoutError", "hits_after_resume": 1}


@needs_server
def test_redis_py_default_retry_applies_one_incr_more_than_once_not_once_per_retry():
    got = outage.default_retry_counts_twice()
    assert got["retries"] > 0 and got["reply"] >= 2 and got["hits"] == got["reply"] == got["incr_calls"]
    reconnects = got["hello_calls"]  # every retry reconnects: its handshake comes first
    assert reconnects >= 2 and got["incr_calls"] < reconnects + 1


@needs_server
def test_out_of_memory_is_no_answer_for_the_guard():
    with private_redis(extra_args=["--maxmemory-policy", "noeviction"]) as srv:
        c = srv.client(prefix="t:")
        rl.gcra(c, "k")
        c.config_set("maxmemory", 1)  # below what the server already uses
        v = g.Guard(lambda: rl.gcra(c, "k"), "closed")()
        assert v == g.Verdict(False, "closed", "OutOfMemoryError")


@needs_server
def test_outage_traffic_is_recorded_and_summarized():
    rec = outage.run_outage("stop", "closed", seconds=0.6, fault_at=0.2, fault_for=0.2, rate=50, limit=100)
    assert len(rec) == 30 and all(x["source"] in ("redis", "closed") for x in rec)
    s = outage.summarize(rec, fault_at=0.2, fault_for=0.2)
    assert s["requests"] == 10 and s["allowed"] + s["denied"] + s["errors"] == 10
    assert any(x["source"] == "closed" for x in rec) and any(x["source"] == "redis" for x in rec)


# ---------------------------------------------------------------------- which errors mean "no answer"


@pytest.mark.parametrize(
    "exc, want",
    [
        (redis.exceptions.ConnectionError("refused"), True),
        (redis.exceptions.TimeoutError("slow"), True),
        (redis.exceptions.BusyLoadingError("loading"), True),
        (redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."), True),
        (redis.exceptions.ReadOnlyError("You can't write against a read only replica."), True),
        (redis.exceptions.ResponseError("BUSY Redis is busy running a script. You can only call SCRIPT KILL"), True),
        (
            redis.exceptions.MasterDownError("Link with MASTER is down and replica-serve-stale-data is set to 'no'."),
            True,
        ),
        (redis.exceptions.ClusterDownError("The cluster is down"), True),
        (redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"), True),
        (redis.exceptions.AuthenticationError("invalid username-password pair or user is disabled."), False),
        (redis.exceptions.AuthorizationError("no permission"), False),
        (redis.exceptions.ResponseError("wrong number of arguments for 'evalsha' command"), False),
        (redis.exceptions.NoPermissionError("this user has no permissions to run the 'evalsha' command"), False),
        (ValueError("limit must be at least 1"), False),
    ],
)
def test_no_answer_is_an_outage_not_a_wrong_password_nor_a_bug(exc, want):
    assert g.no_answer(exc) is want


def test_guard_raises_a_refused_password_instead_of_answering_by_policy():
    def decide():
        raise redis.exceptions.AuthenticationError("invalid username-password pair or user is disabled.")

    guard = g.Guard(decide, "open")
    with pytest.raises(redis.exceptions.AuthenticationError):
        guard()
    assert guard.fallbacks == 0


def test_a_busy_script_is_answered_by_the_policy():
    def decide():
        raise redis.exceptions.ResponseError("BUSY Redis is busy running a script.")

    assert g.Guard(decide, "closed")() == g.Verdict(False, "closed", "ResponseError")


def test_a_full_pool_is_answered_by_the_policy_without_opening_the_breaker():
    clock, calls = Clock(), []

    def decide():
        calls.append(1)
        if len(calls) == 1:
            raise redis.exceptions.MaxConnectionsError("Too many connections")
        return True

    guard = g.Guard(decide, "closed", breaker=g.Breaker(cooldown_ms=10_000, clock=clock))
    assert guard() == g.Verdict(False, "closed", "MaxConnectionsError")
    assert guard.breaker.state == "closed"
    assert guard() == g.Verdict(True, "redis", None)  # the next request asks Redis again


def test_a_probe_that_raises_a_bug_does_not_leave_the_breaker_open_for_ever():
    clock, state = Clock(), {"fail": "down"}

    def decide():
        if state["fail"] == "down":
            raise redis.exceptions.ConnectionError("down")
        if state["fail"] == "bug":
            raise ValueError("a bug in the caller")
        return True

    guard = g.Guard(decide, "open", breaker=g.Breaker(cooldown_ms=500, clock=clock))
    assert guard().source == "open"  # the failure opens the breaker
    clock.t += 0.5
    state["fail"] = "bug"
    with pytest.raises(ValueError):
        guard()  # the half-open probe raises a bug
    state["fail"] = None
    for later_s in (2, 10, 1000):
        clock.t += later_s
        assert guard() == g.Verdict(True, "redis", None), later_s


# ---------------------------------------------------------------------- the budget bounds the request


@needs_server
def test_the_budget_bounds_the_whole_request_not_each_wait_on_a_slow_server():
    from redis_course.lessons.slowproxy import in_front_of

    budget_ms, delay_s = 800, 0.35  # each wait is under the budget; connect + handshake + reply is not
    with private_redis(unix_socket=True) as srv:
        base = srv.client(prefix="t:")
        with in_front_of(srv.socket_path, delay_s=delay_s) as proxy:
            per_wait = g.budget_client(base, budget_ms)  # a new client: its first call connects
            started = time.monotonic()
            assert per_wait.ping() is True  # every wait under the budget: no error
            took = time.monotonic() - started
            assert took > budget_ms / 1000 + 0.1 and proxy.accepted == 1

            fast = g.budget_client(base, budget_ms)
            guard = g.Guard(lambda: fast.ping(), "closed", budget_ms=budget_ms)
            started = time.monotonic()
            v = guard()
            took = time.monotonic() - started
        assert v == g.Verdict(False, "closed", "TimeoutError")
        assert took < budget_ms / 1000 + 0.4
        fast.ping()  # direct again: the connection is opened
        started = time.monotonic()
        assert g.Guard(lambda: fast.ping(), "closed", budget_ms=budget_ms)() == g.Verdict(True, "redis", None)
        assert time.monotonic() - started < 0.5


@needs_server
def test_a_kept_budget_client_reuses_its_connection():
    from redis_course.lessons.slowproxy import in_front_of

    with private_redis(unix_socket=True) as srv:
        base = srv.client(prefix="t:")
        fast = g.budget_client(base, 500)
        with in_front_of(srv.socket_path) as proxy:
            for _ in range(20):
                with g.deadline(500):
                    fast.incr("n")
        assert proxy.accepted == 1 and base.get("n") == "20"
