"""Lesson 04: the limiters do what the page says, on fakeredis and on the real server."""

from __future__ import annotations

import random
import threading

import pytest

from redis_course.lessons import ratelimit as rl

T0 = 1_700_000_000_000  # ms, the start of a second
ALL = list(rl.LIMITERS.items())
IDS = list(rl.LIMITERS)


@pytest.mark.parametrize("name,limiter", ALL, ids=IDS)
def test_exactly_limit_then_denied_with_fields(r, name, limiter):
    ds = [limiter(r, "c1", 10, 1000, now_ms=T0 + 300) for _ in range(12)]
    assert [d.allowed for d in ds] == [True] * 10 + [False] * 2
    assert [d.remaining for d in ds[:10]] == list(range(9, -1, -1))
    assert all(d.retry_after_ms == 0 for d in ds[:10])
    assert all(d.remaining == 0 and d.retry_after_ms > 0 for d in ds[10:])


@pytest.mark.parametrize("name,limiter", ALL, ids=IDS)
def test_retry_after_is_exact_to_the_millisecond(r, name, limiter):
    """Denied at `now`: still denied 1 ms before now + retry_after, allowed exactly then."""
    rng = random.Random(name)
    now = T0
    checked = 0
    for _ in range(300):
        now += rng.choice([0, 0, 1, 7, 40, 95, 333])
        d = limiter(r, "c2", 10, 1000, now_ms=now)
        if d.allowed:
            continue
        retry = d.retry_after_ms
        assert retry > 0
        # probe on a copy of the state: a second client id replayed identically is not needed, because
        # denied requests change nothing; a probe 1 ms early must also be denied
        if retry > 1:
            assert not limiter(r, "c2", 10, 1000, now_ms=now + retry - 1).allowed
        assert limiter(r, "c2", 10, 1000, now_ms=now + retry).allowed
        now += retry
        checked += 1
    assert checked > 10


@pytest.mark.parametrize("name,limiter", ALL, ids=IDS)
def test_every_key_has_a_ttl_and_decisions_take_one_round_trip(r, name, limiter):
    limiter(r, "warm", now_ms=T0)  # the first call may load the script
    with rl.count_round_trips() as c:
        decisions = rl.replay(r, limiter, rl.bursty_trace(), "ttl")
    assert c["n"] == len(decisions)
    # TIME on the server: the TTL is exactly when the state stops mattering (a minute window here, so
    # the key is still there when we look, however slow the machine)
    limiter(r, "server-clock", 10, 60_000)
    assert r.course_keys("rl:*")
    assert rl.keys_without_ttl(r) == []
    for k in r.course_keys("rl:*"):
        # a controlled clock adds a minute of slack: expiry runs on the server's real clock
        assert 0 < r.pttl(k) <= (120_000 if k.endswith(":server-clock") else 62_000)


def test_bursty_trace_is_the_one_the_page_shows(r):
    times = rl.bursty_trace()
    got = {}
    for name, limiter in ALL:
        allowed = [d.allowed for d in rl.replay(r, limiter, times, "trace")]
        got[name] = (sum(allowed), rl.max_in_any_window(times, allowed))
    assert len(times) == 113
    assert got == {
        "fixed window": (48, 19),
        "first-hit window": (48, 19),
        "list": (48, 19),
        "sliding log": (48, 10),
        "sliding window counter": (45, 10),
        "token bucket": (61, 19),
        "GCRA": (61, 19),
    }


def test_sliding_log_never_exceeds_the_limit_in_any_window(r):
    rng = random.Random(7)
    t, times = 0, []
    for _ in range(1500):
        t += rng.choice([0, 1, 3, 20, 80, 200])
        times.append(t)
    allowed = [d.allowed for d in rl.replay(r, rl.sliding_log, times, "exact")]
    assert rl.max_in_any_window(times, allowed) == 10
    # and it stores allowed requests only
    assert r.zcard(r.key("rl", "log", "exact")) <= 10


def test_clients_do_not_share_quota(r):
    for _ in range(10):
        assert rl.gcra(r, "alice", now_ms=T0).allowed
    assert not rl.gcra(r, "alice", now_ms=T0).allowed
    assert rl.gcra(r, "bob", now_ms=T0).allowed


def test_fixed_window_boundaries_and_first_hit_window(r):
    assert sum(rl.fixed_window(r, "b", now_ms=T0 + 999).allowed for _ in range(11)) == 10
    assert rl.fixed_window(r, "b", now_ms=T0 + 1000).allowed  # a new aligned window
    assert sum(rl.first_hit_window(r, "b", now_ms=T0 + 500).allowed for _ in range(11)) == 10
    assert not rl.first_hit_window(r, "b", now_ms=T0 + 1499).allowed  # opened at +500
    assert rl.first_hit_window(r, "b", now_ms=T0 + 1500).allowed


def test_published_limiter1_variants(r):
    T = 1_700_000_000
    assert [rl.run(rl.limiter1_get_then_multi(r, "en", now=T)) for _ in range(12)].count(True) == 11
    assert [rl.run(rl.limiter1_multi_then_check(r, "ru", now=T)) for _ in range(12)].count(True) == 10
    for _ in range(10):
        rl.run(rl.limiter1_get_then_multi(r, "race", now=T))
    decisions = rl.interleave(
        {"A": rl.limiter1_get_then_multi(r, "race", now=T), "B": rl.limiter1_get_then_multi(r, "race", now=T)},
        "ABABAB",
        out=lambda s: None,
    )
    assert decisions == {"A": True, "B": True}
    assert r.get(r.key("race", T)) == "12"
    assert 0 < r.ttl(r.key("race", T)) <= 10


def test_published_limiter1_under_threads_transaction_first_admits_ten(r):
    T = 1_700_000_100
    results = []
    barrier = threading.Barrier(16)

    def client():
        barrier.wait()
        results.extend(rl.run(rl.limiter1_multi_then_check(r, "threads", now=T)) for _ in range(3))

    threads = [threading.Thread(target=client) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 10 and len(results) == 48


def test_client_clock_skew_splits_a_second(r):
    def one_second(ip, skew):
        return sum(
            rl.run(rl.limiter1_multi_then_check(r, ip, now=1_700_000_100 + i * 0.025 - (skew if i % 2 else 0)))
            for i in range(40)
        )

    assert one_second("same", 0.0) == 10
    assert one_second("skew", 0.6) == 20


SPIN_THEN_EXPIRE = """
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= start + 50000
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('SET', KEYS[1], 1)
redis.call('PEXPIRE', KEYS[1], 1000)
return now + 1000
"""


def test_a_ttl_set_in_a_script_counts_from_pexpire_on_redis_and_from_eval_on_fakeredis(r):
    """The page's "server's clock" guarantee: Redis counts a script's PEXPIRE from when it runs,
    fakeredis from when the EVAL began, so after 50 ms of script its key expires 50 ms early."""
    key = r.key("spin")
    due = r.eval(SPIN_THEN_EXPIRE, 1, key)
    with r.pipeline() as tx:
        tx.time()
        tx.pttl(key)
        (sec, usec), pttl = tx.execute()
    early = due - (sec * 1000 + usec // 1000 + pttl)
    if r.backend == "fakeredis":
        assert 45 <= early <= 1000, early
    else:
        assert -2 <= early <= 2, early


def test_limiter2_crash_leaves_a_key_without_ttl_and_lua_does_not(r):
    rl.interleave({"A": rl.limiter2(r, "crash")}, "AA", out=lambda s: None)
    assert r.ttl(r.key("crash")) == -1
    assert rl.keys_without_ttl(r) == ["crash"]
    for _ in range(11):
        rl.run(rl.limiter2(r, "crash"))
    assert not rl.run(rl.limiter2(r, "crash"))
    assert rl.burst(rl.limiter2_lua, r, "lua") == 10
    assert r.ttl(r.key("lua")) in (0, 1)


def test_list_limiter_off_by_one_missed_count_and_no_key_without_ttl(r):
    assert rl.burst(rl.list_limiter, r, "l1") == 11
    for _ in range(3):
        rl.run(rl.list_limiter(r, "l2"))
    steps = rl.list_limiter(r, "l2")
    next(steps), next(steps)  # LLEN, EXISTS -> 1
    r.delete(r.key("l2"))  # the list expires here
    assert next(steps).endswith("-> 0")  # RPUSHX pushes nothing: a request not counted
    assert rl.run(steps) is True
    # both clients see no list: both create it, both counted, and it keeps a TTL
    rl.interleave({"A": rl.list_limiter(r, "l3"), "B": rl.list_limiter(r, "l3")}, "AABBABAB", out=lambda s: None)
    assert r.llen(r.key("l3")) == 2
    assert rl.keys_without_ttl(r) == []


def test_sliding_window_counter_error_is_what_the_page_says(r):
    rng = random.Random(4)
    t, noisy = 0, []
    for _ in range(2000):
        rate = rng.choice([4, 9, 12, 30])
        t += max(1, int(rng.expovariate(rate) * 1000))
        noisy.append(t)
    exact = [d.allowed for d in rl.replay(r, rl.sliding_log, noisy, "noisy")]
    approx = [d.allowed for d in rl.replay(r, rl.sliding_window_counter, noisy, "noisy")]
    assert sum(a != b for a, b in zip(exact, approx)) == 319
    assert (sum(exact), sum(approx)) == (1633, 1624)
    assert rl.max_in_any_window(noisy, exact) == 10
    assert rl.max_in_any_window(noisy, approx) == 13


def test_bad_arguments_are_refused(r):
    with pytest.raises(ValueError):
        rl.gcra(r, "x", limit=0)


def test_list_limiter_check_then_act_race_lets_every_early_reader_in(r):
    # nine requests are in; sixteen clients read LLEN (9) before any of them pushes: all get in
    for _ in range(9):
        rl.run(rl.list_limiter(r, "race"))
    clients = {name: rl.list_limiter(r, "race") for name in "ABCDEFGHIJKLMNOP"}
    decisions = rl.interleave(clients, "ABCDEFGHIJKLMNOP" * 4, out=lambda s: None)
    assert list(decisions.values()) == [True] * 16  # 25 in one second against a limit of 10


def test_a_burst_is_sent_again_when_the_one_second_key_could_expire_during_it(r, monkeypatch):
    """The published limiters' key lives one second: ``rl.burst`` counts a burst only when it ended
    well inside it, so a loaded machine shows the same 11 of 12 as a quiet one."""
    assert rl.burst(rl.list_limiter, r, "b1") == 11
    assert rl.burst(rl.limiter2_lua, r, "b2") == rl.LIMIT  # the script version has no off-by-one
    assert r.ttl(r.key("b2")) in (0, 1)
    clock, tries = [0.0], []

    def slow(r, ip):  # a limiter whose every request takes 0.1 s of the monotonic clock
        tries.append(ip)
        clock[0] += 0.1
        yield "slow"
        return True

    monkeypatch.setattr(rl.time, "monotonic", lambda: clock[0])
    assert rl.burst(slow, r, "b3", n=12) == 12
    assert len(tries) == 12 * rl.BURST_ATTEMPTS, "a burst longer than the key's second was not sent again"
    tries.clear()
    assert rl.burst(slow, r, "b4", n=7) == 7 and len(tries) == 7, "a burst inside the second was sent twice"
