"""Public tests of lab 04: run them with `python3 run.py check 04`."""
from redis_course.labs.testing import hint, points

T0 = 1_800_000_000_000  # ms; the start of a minute (and of a second)
MIN = 60_000


@points(1)
@hint("result-shape")
def test_result_is_a_dict_with_three_fields(lab, redis):
    for name in ("fixed_window", "sliding_window", "token_bucket"):
        d = getattr(lab, name)("shape", 5, MIN, T0)
        assert isinstance(d, dict) and set(d) == {"allowed", "remaining", "retry_after_ms"}, f"{name}: {d!r}"
        assert d == {"allowed": True, "remaining": 4, "retry_after_ms": 0}, f"{name}: {d!r}"


@points(1)
@hint("limit-then-deny")
def test_fixed_window_allows_the_limit_then_denies(lab, redis):
    got = [lab.fixed_window("alice", 3, MIN, T0 + 1000) for _ in range(4)]
    assert [d["allowed"] for d in got] == [True, True, True, False]
    assert [d["remaining"] for d in got] == [2, 1, 0, 0]
    assert got[3]["retry_after_ms"] == MIN - 1000


@points(1)
@hint("limit-then-deny")
def test_sliding_window_allows_the_limit_then_denies(lab, redis):
    got = [lab.sliding_window("alice", 3, MIN, T0 + 1000 * i) for i in range(4)]
    assert [d["allowed"] for d in got] == [True, True, True, False]
    assert [d["remaining"] for d in got] == [2, 1, 0, 0]
    assert got[3]["retry_after_ms"] == MIN - 3000


@points(1)
@hint("limit-then-deny")
def test_token_bucket_allows_the_limit_then_denies(lab, redis):
    got = [lab.token_bucket("alice", 5, MIN, T0) for _ in range(6)]
    assert [d["allowed"] for d in got] == [True] * 5 + [False]
    assert [d["remaining"] for d in got] == [4, 3, 2, 1, 0, 0]
    assert got[5]["retry_after_ms"] == MIN // 5


@points(1)
@hint("fixed-boundary")
def test_fixed_window_opens_a_new_window_on_time(lab, redis):
    for _ in range(3):
        lab.fixed_window("bob", 3, MIN, T0 + 1000)
    assert lab.fixed_window("bob", 3, MIN, T0 + MIN - 1)["allowed"] is False
    assert lab.fixed_window("bob", 3, MIN, T0 + MIN) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}


@points(2)
@hint("one-script")
def test_sixteen_processes_never_get_more_than_the_limit(lab, redis):
    calls = [("fixed_window", ("crowd", 10, MIN, T0 + 5))] * 48
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"a call raised: {errors[0]}"
    allowed = [res for res in results if res["allowed"]]
    assert len(allowed) == 10, f"{len(allowed)} requests were allowed in one window, the limit is 10"
