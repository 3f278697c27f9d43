"""Hidden tests of lab 04: only the grader runs these."""
import pytest

from redis_course.labs.testing import hint, points

GRADER_CANARY = "grader-canary-04-rate-limiting-3b9e71c4"  # must never appear in a student release

T0 = 1_800_000_000_000  # ms; the start of a minute
MIN = 60_000
NAMES = ("fixed_window", "sliding_window", "token_bucket")


def _crowd(lab, name, clients=4, per_client=40, limit=10):
    calls = [(name, (f"crowd-{name}-{i % clients}", limit, MIN, T0 + 7)) for i in range(clients * per_client)]
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"a call raised: {errors[0]}"
    for c in range(clients):
        mine = [res for (_, args), res in zip(calls, results) if args[0].endswith(f"-{c}")]
        allowed = [res for res in mine if res["allowed"]]
        assert len(allowed) == limit, f"{name}: {len(allowed)} allowed for one client, the limit is {limit}"
        assert sorted(res["remaining"] for res in allowed) == list(range(limit)), \
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
            fn("ttl-a", 5, MIN, T0 + 1000 * i)
        for _ in range(3):
            fn("ttl-b", 5, 3_600_000)          # the server's clock
    keys = redis.course_keys()
    assert keys, "no key was written"
    for k in keys:
        assert redis.pttl(k) > 0, f"key {redis.unprefixed(k)} has no TTL"


@points(2)
@hint("fixed-boundary")
def test_fixed_window_boundaries_hidden(lab, redis):
    for _ in range(4):
        lab.fixed_window("edge", 4, 10_000, T0 + 10_000 + 2)
    assert lab.fixed_window("edge", 4, 10_000, T0 + 19_999) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert lab.fixed_window("edge", 4, 10_000, T0 + 20_000)["allowed"] is True
    # a window is counted on its own: the one before is unaffected by what came after
    assert lab.fixed_window("edge2", 4, 10_000, T0 + 9_999)["allowed"] is True


@points(2)
@hint("sliding-boundary")
def test_sliding_window_lets_entries_leave_exactly_hidden(lab, redis):
    f = lambda t: lab.sliding_window("slide", 3, 10_000, T0 + t)  # noqa: E731
    assert [f(t)["allowed"] for t in (0, 2000, 4000)] == [True, True, True]
    assert f(5000) == {"allowed": False, "remaining": 0, "retry_after_ms": 5000}
    assert f(9999) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert f(10_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert f(10_001) == {"allowed": False, "remaining": 0, "retry_after_ms": 1999}
    # much later everything has left the window: the full limit again
    assert f(100_000) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}


@points(2)
@hint("bucket-refill")
def test_token_bucket_refills_continuously_hidden(lab, redis):
    f = lambda t: lab.token_bucket("drip", 5, MIN, T0 + t)  # noqa: E731  one token per 12,000 ms
    assert [f(0)["allowed"] for _ in range(5)] == [True] * 5
    assert f(11_999) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert f(12_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert f(18_000) == {"allowed": False, "remaining": 0, "retry_after_ms": 6000}
    assert f(30_000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}    # 1.5 tokens had come back
    assert f(30_000) == {"allowed": False, "remaining": 0, "retry_after_ms": 6000}
    assert f(10 * MIN)["remaining"] == 4                                           # never more than full


@points(2)
@hint("retry-exact")
def test_retry_after_is_exact_hidden(lab, redis):
    for name in NAMES:
        fn = getattr(lab, name)
        now = T0 + 123
        for _ in range(3):
            fn(f"retry-{name}", 3, 9_000, now)
        d = fn(f"retry-{name}", 3, 9_000, now + 17)
        assert d["allowed"] is False and d["retry_after_ms"] > 0, f"{name}: {d!r}"
        later = now + 17 + d["retry_after_ms"]
        if d["retry_after_ms"] > 1:
            assert fn(f"retry-{name}", 3, 9_000, later - 1)["allowed"] is False, \
                f"{name}: allowed before retry_after_ms had passed"
        assert fn(f"retry-{name}", 3, 9_000, later)["allowed"] is True, f"{name}: still denied at retry_after_ms"


@points(1)
@hint("isolation")
def test_other_clients_and_keys_are_untouched_hidden(lab, redis):
    other = redis.key("session", "carol")
    redis.set(other, "keep-me", px=600_000)
    for name in NAMES:
        fn = getattr(lab, name)
        for _ in range(5):
            fn("dave", 2, MIN, T0)
        assert fn("erin", 2, MIN, T0) == {"allowed": True, "remaining": 1, "retry_after_ms": 0}, name
    assert redis.get(other) == "keep-me"
    assert 590_000 < redis.pttl(other) <= 600_000


@points(1)
@hint("server-clock")
@pytest.mark.parametrize("name", NAMES)
def test_without_now_the_servers_clock_is_used_hidden(lab, redis, name):
    fn = getattr(lab, name)
    got = [fn(f"clock-{name}", 2, 3_600_000) for _ in range(3)]
    assert [d["allowed"] for d in got] == [True, True, False]
    assert 0 < got[2]["retry_after_ms"] <= 3_600_000
