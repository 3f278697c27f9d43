"""Public tests of lab 04: run them with `python3 run.py check 04`."""
from redis_course.labs.testing import hint, points

T0 = 1_800_000_000_000  # ms; the start of a minute (and of a second)
MIN = 60_000


@points(1)
@hint("result-shape")
def test_result_is_a_dict_with_three_fields(lab, redis):
    for name in ("fixed_window", "sliding_window", "token_bucket"):
        d = getattr(lab, name)("shape", [[5, MIN]], 1, T0)
        assert isinstance(d, dict) and set(d) == {"allowed", "remaining", "retry_after_ms"}, f"{name}: {d!r}"
        assert d == {"allowed": True, "remaining": 4, "retry_after_ms": 0}, f"{name}: {d!r}"


@points(1)
@hint("limit-then-deny")
def test_fixed_window_allows_the_limit_then_denies(lab, redis):
    got = [lab.fixed_window("alice", [[3, MIN]], 1, T0 + 1000) for _ in range(4)]
    assert [d["allowed"] for d in got] == [True, True, True, False]
    assert [d["remaining"] for d in got] == [2, 1, 0, 0]
    assert got[3]["retry_after_ms"] == MIN - 1000


@points(1)
@hint("limit-then-deny")
def test_sliding_window_allows_the_limit_then_denies(lab, redis):
    got = [lab.sliding_window("alice", [[3, MIN]], 1, T0 + 1000 * i) for i in range(4)]
    assert [d["allowed"] for d in got] == [True, True, True, False]
    assert [d["remaining"] for d in got] == [2, 1, 0, 0]
    assert got[3]["retry_after_ms"] == MIN - 3000


@points(1)
@hint("limit-then-deny")
def test_token_bucket_allows_the_limit_then_denies(lab, redis):
    got = [lab.token_bucket("alice", [[5, MIN]], 1, T0) for _ in range(6)]
    assert [d["allowed"] for d in got] == [True] * 5 + [False]
    assert [d["remaining"] for d in got] == [4, 3, 2, 1, 0, 0]
    assert got[5]["retry_after_ms"] == MIN // 5


@points(1)
@hint("cost")
def test_a_request_takes_its_cost_and_a_denied_one_takes_nothing(lab, redis):
    f = lambda cost: lab.fixed_window("bulk", [[10, MIN]], cost, T0 + 1000)  # noqa: E731
    assert f(4) == {"allowed": True, "remaining": 6, "retry_after_ms": 0}
    assert f(4) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}
    assert f(3) == {"allowed": False, "remaining": 2, "retry_after_ms": MIN - 1000}
    assert f(2) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}   # the denied 3 took nothing


@points(1)
@hint("all-limits")
def test_every_limit_must_allow(lab, redis):
    limits = [[3, 1000], [5, MIN]]                 # 3 per second and 5 per minute
    f = lambda t: lab.fixed_window("pair", limits, 1, T0 + t)  # noqa: E731
    assert [f(0)["allowed"] for _ in range(3)] == [True, True, True]
    assert f(10) == {"allowed": False, "remaining": 0, "retry_after_ms": 990}     # the second is full
    assert f(1000) == {"allowed": True, "remaining": 1, "retry_after_ms": 0}      # the minute has 1 left
    assert f(1001) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert f(2000) == {"allowed": False, "remaining": 0, "retry_after_ms": MIN - 2000}  # the minute is full


@points(2)
@hint("one-script")
def test_sixteen_processes_never_get_more_than_the_limit(lab, redis):
    calls = [("fixed_window", ("crowd", [[10, MIN]], 1, T0 + 5))] * 48
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"a call raised: {errors[0]}"
    allowed = [res for res in results if res["allowed"]]
    assert len(allowed) == 10, f"{len(allowed)} requests were allowed in one window, the limit is 10"
