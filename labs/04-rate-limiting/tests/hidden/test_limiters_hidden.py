"""Hidden tests of lab 04: only the grader runs these."""
import pytest

from redis_course.labs.testing import hint, points

GRADER_CANARY = "grader-canary-04-rate-limiting-3b9e71c4"  # must never appear in a student release

T0 = 1_800_000_000_000  # ms; the start of a minute
MIN = 60_000
NAMES = ("fixed_window", "sliding_window", "token_bucket")


def _crowd(lab, name, clients=4, per_client=40):
    # cost 2 against 20 per minute (and a looser 50 per 10 minutes): 10 requests per client get in
    limits = [[20, MIN], [50, 10 * MIN]]
    calls = [(name, (f"crowd-{name}-{i % clients}", limits, 2, T0 + 7)) for i in range(clients * per_client)]
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"a call raised: {errors[0]}"
    for c in range(clients):
        mine = [res for (_, args), res in zip(calls, results) if args[0].endswith(f"-{c}")]
        allowed = [res for res in mine if res["allowed"]]
        assert len(allowed) == 10, f"{name}: {len(allowed)} requests of cost 2 allowed for one client, 10 fit in 20"
        assert sorted(res["remaining"] for res in allowed) == list(range(0, 20, 2)), \
            f"{name}: two concurrent requests were told the same 'remaining'"


@points(2)
@hint("one-script")
def test_fixed_window_under_sixteen_processes_hidden(lab, redis):
    _crowd(lab, "fixed_window")


@points(2)
@hint("one-script")
def test_sliding_window_under_sixteen_processes_hidden(lab, redis):
    _crowd(lab, "sliding_window")


@points(2)
@hint("one-script")
def test_token_bucket_under_sixteen_processes_hidden(lab, redis):
    _crowd(lab, "token_bucket")


@points(2)
@hint("ttl")
def test_every_key_has_a_ttl_hidden(lab, redis):
    for name in NAMES:
        fn = getattr(lab, name)
        for i in range(12):
            fn("ttl-a", [[5, 1000], [8, MIN]], 2, T0 + 1000 * i)
        for _ in range(3):
            fn("ttl-b", [[5, 3_600_000]], 1)          # the server's clock
    keys = redis.course_keys()
    assert keys, "no key was written"
    for k in keys:
        assert redis.pttl(k) > 0, f"key {redis.unprefixed(k)} has no TTL"


@points(2)
@hint("fixed-boundary")
def test_fixed_window_boundaries_hidden(lab, redis):
    f = lambda t: lab.fixed_window("edge", [[4, 10_000], [6, MIN]], 1, T0 + t)  # noqa: E731
    assert [f(10_002)["allowed"] for _ in range(4)] == [True] * 4
    assert f(19_999) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert f(20_000) == {"allowed": True, "remaining": 1, "retry_after_ms": 0}   # a new 10 s window
    assert f(20_001) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    # a new 10 s window again, but the minute is full: wait for the minute
    assert f(30_000) == {"allowed": False, "remaining": 0, "retry_after_ms": 30_000}
    assert f(MIN) == {"allowed": True, "remaining": 3, "retry_after_ms": 0}
    # a window is counted on its own: the one before is unaffected by what came after
    assert lab.fixed_window("edge2", [[4, 10_000]], 1, T0 + 9_999)["allowed"] is True


@points(2)
@hint("sliding-boundary")
def test_sliding_window_lets_entries_leave_exactly_hidden(lab, redis):
    f = lambda t: lab.sliding_window("slide", [[3, 10_000]], 1, T0 + t)  # noqa: E731
    assert [f(t)["allowed"] for t in (0, 2000, 4000)] == [True, True, True]
    assert f(5000) == {"allowed": False, "remaining": 0, "retry_after_ms": 5000}
    assert f(9999) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert f(10_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert f(10_001) == {"allowed": False, "remaining": 0, "retry_after_ms": 1999}
    # much later everything has left the window: the full limit again
    assert f(100_000) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}
    # with a cost, as many of the oldest units as the request needs have to leave
    g = lambda t, cost: lab.sliding_window("slide-cost", [[5, 10_000]], cost, T0 + t)  # noqa: E731
    assert g(0, 2)["remaining"] == 3 and g(3000, 2)["remaining"] == 1
    assert g(4000, 3) == {"allowed": False, "remaining": 1, "retry_after_ms": 6000}
    assert g(9999, 3) == {"allowed": False, "remaining": 1, "retry_after_ms": 1}
    assert g(10_000, 3) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert g(12_999, 1) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert g(13_000, 2) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}


@points(2)
@hint("bucket-refill")
def test_token_bucket_refills_continuously_hidden(lab, redis):
    f = lambda t: lab.token_bucket("drip", [[5, MIN]], 1, T0 + t)  # noqa: E731  one token per 12,000 ms
    assert [f(0)["allowed"] for _ in range(5)] == [True] * 5
    assert f(11_999) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert f(12_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert f(18_000) == {"allowed": False, "remaining": 0, "retry_after_ms": 6000}
    assert f(30_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}    # 1.5 tokens had come back
    assert f(30_000) == {"allowed": False, "remaining": 0, "retry_after_ms": 6000}
    assert f(10 * MIN)["remaining"] == 4                                           # never more than full
    # two buckets, cost 2: 4 tokens back in 4 s, and 10 tokens back in a minute
    g = lambda t: lab.token_bucket("drip2", [[4, 4000], [10, MIN]], 2, T0 + t)  # noqa: E731
    assert [g(0)["remaining"], g(0)["remaining"]] == [2, 0]
    assert g(500) == {"allowed": False, "remaining": 0, "retry_after_ms": 1500}
    assert g(2000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert g(4000)["allowed"] is True and g(6000)["allowed"] is True
    assert g(8000) == {"allowed": False, "remaining": 1, "retry_after_ms": 4000}  # the slow bucket is short
    assert g(12_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}


@points(2)
@hint("retry-exact")
def test_retry_after_is_exact_hidden(lab, redis):
    now = T0 + 123
    scenarios = {
        "one": ([[3, 9_000]], 1, [0, 0, 0]),
        "slow-binds": ([[4, 1000], [6, 9_000]], 2, [0, 0, 1000]),   # the 9 s limit is the one to wait for
    }
    for name in NAMES:
        fn = getattr(lab, name)
        for tag, (limits, cost, times) in scenarios.items():
            client = f"retry-{name}-{tag}"
            for t in times:
                assert fn(client, limits, cost, now + t)["allowed"] is True, f"{name} {tag}: denied too early"
            d = fn(client, limits, cost, now + 1017)
            assert d["allowed"] is False and d["retry_after_ms"] > 0, f"{name} {tag}: {d!r}"
            later = now + 1017 + d["retry_after_ms"]
            if d["retry_after_ms"] > 1:
                assert fn(client, limits, cost, later - 1)["allowed"] is False, \
                    f"{name} {tag}: allowed before retry_after_ms had passed"
            assert fn(client, limits, cost, later)["allowed"] is True, f"{name} {tag}: still denied at retry_after_ms"


@points(2)
@hint("all-or-nothing")
def test_a_denied_request_counts_in_no_limit_hidden(lab, redis):
    limits = [[3, MIN], [2, 1000]]            # the minute first: it allows while the second denies
    last_retry = {"fixed_window": MIN - 1001, "sliding_window": MIN - 1001, "token_bucket": 18_999}
    for name in NAMES:
        fn = getattr(lab, name)
        f = lambda t: fn(f"atomic-{name}", limits, 1, T0 + t)  # noqa: E731
        assert [f(0)["allowed"], f(0)["allowed"]] == [True, True], name
        assert [f(t)["allowed"] for t in (10, 20, 30, 40)] == [False] * 4, f"{name}: the second is full"
        assert f(1000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}, \
            f"{name}: the denied requests were counted in the minute"
        assert f(1001) == {"allowed": False, "remaining": 0, "retry_after_ms": last_retry[name]}, name


@points(2)
@hint("cost")
def test_cost_is_taken_from_every_limiter_hidden(lab, redis):
    retry = {"fixed_window": MIN - 1000, "sliding_window": MIN - 1000, "token_bucket": 5000}
    for name in NAMES:
        fn = getattr(lab, name)
        f = lambda t, cost: fn(f"cost-{name}", [[10, MIN]], cost, T0 + t)  # noqa: E731
        assert f(0, 4) == {"allowed": True, "remaining": 6, "retry_after_ms": 0}, name
        assert f(0, 4) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}, name
        assert f(1000, 3) == {"allowed": False, "remaining": 2, "retry_after_ms": retry[name]}, name
        assert f(1000, 2) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}, \
            f"{name}: the denied request took units"


@points(1)
@hint("isolation")
def test_other_clients_and_keys_are_untouched_hidden(lab, redis):
    other = redis.key("session", "carol")
    redis.set(other, "keep-me", px=600_000)
    for name in NAMES:
        fn = getattr(lab, name)
        for _ in range(5):
            fn("dave", [[2, MIN]], 1, T0)
        assert fn("erin", [[2, MIN]], 1, T0) == {"allowed": True, "remaining": 1, "retry_after_ms": 0}, name
    assert redis.get(other) == "keep-me"
    assert 590_000 < redis.pttl(other) <= 600_000


@points(1)
@hint("server-clock")
@pytest.mark.parametrize("name", NAMES)
def test_without_now_the_servers_clock_is_used_hidden(lab, redis, name):
    fn = getattr(lab, name)
    got = [fn(f"clock-{name}", [[2, 3_600_000], [5, 7_200_000]], 1) for _ in range(3)]
    assert [d["allowed"] for d in got] == [True, True, False]
    assert 0 < got[2]["retry_after_ms"] <= 3_600_000
