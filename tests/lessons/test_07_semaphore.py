"""Lesson 07, concurrency limiting: the semaphore's leases, release and extend, a crashed holder,
fairness of the waiting line, and one trace through a rate limiter and a concurrency limiter.

Every test runs on fakeredis and on the real server, with a controlled clock (``now_ms``), except
the one that reads the server's clock.
"""

from __future__ import annotations

import pytest

from redis_course.lessons import ratelimit as rl
from redis_course.lessons import semaphore as sem

T = 1_700_000_000_000


def test_limit_holders_then_full_with_the_time_the_first_lease_ends(r):
    slots = [sem.acquire(r, "db", 3, 1000, now_ms=T + i) for i in range(3)]
    assert all(s.token for s in slots) and [s.held for s in slots] == [1, 2, 3]
    full = sem.acquire(r, "db", 3, 1000, now_ms=T + 10)
    assert full.token is None and full.held == 3
    assert full.retry_after_ms == 990  # the first lease ends at T + 1000


def test_a_crashed_holder_keeps_its_slot_only_until_its_lease_ends(r):
    assert sem.acquire(r, "db", 1, 1000, now_ms=T).token  # this holder never releases
    assert sem.acquire(r, "db", 1, 1000, now_ms=T + 999).token is None
    assert sem.acquire(r, "db", 1, 1000, now_ms=T + 1000).token is not None


def test_the_counter_semaphore_loses_a_crashed_holders_slot_for_ever(r):
    for _ in range(3):
        assert sem.counter_acquire(r, "db", 3)  # three holders die before releasing
    assert not sem.counter_acquire(r, "db", 3)
    assert r.get(r.key("sem", "db", "count")) == "3"
    assert r.ttl(r.key("sem", "db", "count")) == -1  # nothing will ever free them


def test_release_frees_the_slot_and_says_whether_the_lease_was_live(r):
    a = sem.acquire(r, "db", 1, 1000, now_ms=T).token
    assert sem.release(r, "db", a, now_ms=T + 10) is True
    b = sem.acquire(r, "db", 1, 1000, now_ms=T + 20).token
    assert b
    assert sem.release(r, "db", b, now_ms=T + 1020) is False  # it ended before the release
    assert sem.release(r, "db", "not-a-token", now_ms=T) is False


def test_a_stalled_holder_learns_it_lost_the_slot(r):
    a = sem.acquire(r, "db", 1, 1000, now_ms=T).token
    assert sem.extend(r, "db", a, 1000, now_ms=T + 900) is True  # heartbeat in time: until T + 1900
    assert sem.acquire(r, "db", 1, 1000, now_ms=T + 1500).token is None
    b = sem.acquire(r, "db", 1, 1000, now_ms=T + 1900).token  # a missed the next heartbeat
    assert b
    assert sem.extend(r, "db", a, 1000, now_ms=T + 1950) is False  # not revived: b holds it
    assert r.zrange(sem.holders_key(r, "db"), 0, -1) == [b]


def test_every_key_has_a_ttl_and_no_other_key_is_written(r):
    sem.acquire(r, "db", 2, 1000)  # the server's clock
    t = sem.acquire(r, "db", 2, 1000).token
    sem.extend(r, "db", t, 5000)
    sem.acquire_fair(r, "db2", "tok", 1, 1000, 500)
    keys = r.course_keys()
    assert keys and all(r.pttl(k) > 0 for k in keys)
    assert {r.unprefixed(k).split(":")[0] for k in keys} == {"sem"}
    assert 4000 < r.pttl(sem.holders_key(r, "db")) <= 5000  # the longest lease, no slack


def test_polling_often_wins_the_slot_and_a_line_makes_it_fair(r):
    clients = {"eager": 5, "polite-a": 50, "polite-b": 50}
    unfair = sem.poll_race(r, "u", clients, fair=False, duration_ms=3000)
    fair = sem.poll_race(r, "f", clients, fair=True, duration_ms=3000)
    got = {c: s["acquired"] for c, s in unfair.items()}
    assert got["eager"] > got["polite-a"] + got["polite-b"] - 5 and min(got.values()) < max(got.values()) / 2
    shares = [s["acquired"] for s in fair.values()]
    assert max(shares) - min(shares) <= 1
    assert max(s["longest_wait_ms"] for s in fair.values()) < max(s["longest_wait_ms"] for s in unfair.values())


def test_a_waiter_who_stops_asking_leaves_the_line(r):
    assert sem.acquire_fair(r, "q", "holder", 1, 10_000, 100, now_ms=T) == (True, 0)
    assert sem.acquire_fair(r, "q", "gone", 1, 10_000, 100, now_ms=T + 1) == (False, 0)
    assert sem.acquire_fair(r, "q", "next", 1, 10_000, 100, now_ms=T + 2) == (False, 1)
    assert sem.release(r, "q", "holder", now_ms=T + 50)
    assert sem.acquire_fair(r, "q", "next", 1, 10_000, 100, now_ms=T + 60) == (False, 1)  # "gone" is first
    assert sem.acquire_fair(r, "q", "next", 1, 10_000, 100, now_ms=T + 150) == (True, 0)  # "gone" timed out


def test_one_trace_rate_limit_caps_arrivals_concurrency_limit_caps_load(r):
    trace = sem.slowdown_trace()
    by_rate = sem.replay_concurrency(
        trace,
        lambda now: "x" if rl.gcra(r, "api", limit=20, window_ms=1000, now_ms=now).allowed else None,
        lambda token, now: None,
    )
    by_slots = sem.replay_concurrency(
        trace,
        lambda now: sem.acquire(r, "api", 8, 10_000, now_ms=now).token,
        lambda token, now: sem.release(r, "api", token, now_ms=now),
    )
    assert sum(by_rate["admitted"]) == len(trace)  # 20/s never exceeds 20/s ...
    assert max(n for _, n in by_rate["in_flight"]) == 40  # ... while 40 pile up on a slow service
    assert max(n for _, n in by_slots["in_flight"]) == 8
    assert sum(by_slots["admitted"]) < len(trace)


@pytest.mark.parametrize("bad", [dict(limit=0, lease_ms=100), dict(limit=1, lease_ms=0)])
def test_bad_arguments_are_refused_before_any_command(r, bad):
    with pytest.raises(ValueError):
        sem.acquire(r, "db", **bad)
    assert r.course_keys() == []


def test_a_waiter_never_shortens_the_ttl_of_a_lease_that_was_extended(r):
    import time

    assert sem.acquire_fair(r, "x", "a", 1, 200, 100) == (True, 0)  # the server's clock
    assert sem.extend(r, "x", "a", 10_000) is True  # a long job: 10 s
    assert sem.acquire_fair(r, "x", "b", 1, 200, 100) == (False, 0)
    assert r.pttl(sem.holders_key(r, "x")) > 9_000
    time.sleep(0.35)  # past every other TTL
    assert sem.acquire_fair(r, "x", "c", 1, 200, 100)[0] is False  # a still holds the slot
    assert r.zrange(sem.holders_key(r, "x"), 0, -1) == ["a"]


def test_every_key_of_one_semaphore_is_in_one_cluster_slot(r):
    from redis_course.cluster.slots import key_slot

    sem.acquire_fair(r, "db", "tok", 1, 1000, 500)
    sem.acquire_fair(r, "db", "tok2", 1, 1000, 500)
    keys = r.course_keys()
    assert len(keys) == 4 and len({key_slot(k) for k in keys}) == 1


def test_fences_follow_the_order_of_grants_and_never_restart(r):
    tokens = [sem.acquire_fenced(r, "f", 2, 1000, now_ms=T + i) for i in range(3)]
    assert [f for _, f in tokens] == [1, 2, 0] and tokens[2][0] is None  # the third is refused
    assert sem.acquire_fenced(r, "f", 2, 1000, now_ms=T + 1001)[1] == 3  # after the leases end
    assert r.ttl(r.key("sem", "{f}", "fence")) == -1


def test_a_stalled_holder_overwrites_the_next_ones_work_unless_the_resource_checks_fences(r):
    plain = sem.stalled_holder(r, "plain", fenced=False)
    assert plain["a_still_held"] is False and plain["value"] == "a"  # b's work is lost
    fenced = sem.stalled_holder(r, "fenced", fenced=True)
    assert fenced["fences"] == (1, 2) and fenced["b_wrote"] is True
    assert fenced["late_write_applied"] is False and fenced["value"] == "b"
