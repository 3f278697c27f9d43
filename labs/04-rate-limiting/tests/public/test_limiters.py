"""Public tests of lab 04: run them with `python3 run.py check 04`."""
import threading
import time

from redis_course.l10n import _
from redis_course.labs.engine.testing import StudentCrash, StudentError, StudentTimeout, contract, hint, points

T0 = 1_800_000_000_000  # ms; the start of a minute (and of a second)
MIN = 60_000


@points(1)
@hint("result-shape")
@contract("reply-shape")
def test_result_is_a_dict_with_three_fields(lab, redis):
    """Every limiter answers a dict with allowed, remaining and retry_after_ms"""
    want = {"allowed": True, "remaining": 4, "retry_after_ms": 0}
    for name in ("fixed_window", "sliding_window", "token_bucket"):
        d = getattr(lab, name)("shape", [[5, MIN]], 1, T0)
        assert isinstance(d, dict) and d == want and d["allowed"] is True, _(
            "{name}: expected {want}, saw {seen}").format(name=name, want=want, seen=d)


@points(1)
@hint("limit-then-deny")
@contract("fixed-window", "retry-exact")
def test_fixed_window_allows_the_limit_then_denies(lab, redis):
    """The fixed window allows the limit, then denies with the right wait"""
    got = [lab.fixed_window("alice", [[3, MIN]], 1, T0 + 1000) for _ in range(4)]
    assert [d["allowed"] for d in got] == [True, True, True, False]
    assert [d["remaining"] for d in got] == [2, 1, 0, 0]
    assert got[3]["retry_after_ms"] == MIN - 1000


@points(1)
@hint("limit-then-deny")
@contract("sliding-window", "retry-exact")
def test_sliding_window_allows_the_limit_then_denies(lab, redis):
    """The sliding window allows the limit, then denies with the right wait"""
    got = [lab.sliding_window("alice", [[3, MIN]], 1, T0 + 1000 * i) for i in range(4)]
    assert [d["allowed"] for d in got] == [True, True, True, False]
    assert [d["remaining"] for d in got] == [2, 1, 0, 0]
    assert got[3]["retry_after_ms"] == MIN - 3000


@points(1)
@hint("limit-then-deny")
@contract("token-bucket", "retry-exact")
def test_token_bucket_allows_the_limit_then_denies(lab, redis):
    """The token bucket allows the limit, then denies with the right wait"""
    got = [lab.token_bucket("alice", [[5, MIN]], 1, T0) for _ in range(6)]
    assert [d["allowed"] for d in got] == [True] * 5 + [False]
    assert [d["remaining"] for d in got] == [4, 3, 2, 1, 0, 0]
    assert got[5]["retry_after_ms"] == MIN // 5


@points(1)
@hint("cost")
@contract("cost-units", "all-or-nothing")
def test_a_request_takes_its_cost_and_a_denied_one_takes_nothing(lab, redis):
    """A request takes its cost and a denied one takes nothing"""
    f = lambda cost: lab.fixed_window("bulk", [[10, MIN]], cost, T0 + 1000)  # noqa: E731
    assert f(4) == {"allowed": True, "remaining": 6, "retry_after_ms": 0}
    assert f(4) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}
    assert f(3) == {"allowed": False, "remaining": 2, "retry_after_ms": MIN - 1000}
    assert f(2) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}   # the denied 3 took nothing


@points(1)
@hint("all-limits")
@contract("all-limits-checked", "remaining-tightest")
def test_every_limit_must_allow(lab, redis):
    """A request is allowed only when every limit has room"""
    limits = [[3, 1000], [5, MIN]]                 # 3 per second and 5 per minute
    f = lambda t: lab.fixed_window("pair", limits, 1, T0 + t)  # noqa: E731
    assert [f(0)["allowed"] for _ in range(3)] == [True, True, True]
    assert f(10) == {"allowed": False, "remaining": 0, "retry_after_ms": 990}     # the second is full
    assert f(1000) == {"allowed": True, "remaining": 1, "retry_after_ms": 0}      # the minute has 1 left
    assert f(1001) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert f(2000) == {"allowed": False, "remaining": 0, "retry_after_ms": MIN - 2000}  # the minute is full


PAUSE_LUA = """
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= start + tonumber(ARGV[1]) * 1000
return math.floor(start / 1000)
"""  # the grader's own script: the server runs nothing else for ARGV[1] ms


def together(redis, workers, calls, pause_ms=800):
    """Call ``calls[k]`` in ``workers[k]``, all while the grader's script holds the server: every
    process sends its first command before any is answered, then they are answered in turn, as on a
    busy production server.  Returns the results (an exception in place of a call that raised)."""
    results = [None] * len(calls)

    def pause():
        redis.eval(PAUSE_LUA, 0, pause_ms)

    def call(k):
        name, args = calls[k]
        try:
            results[k] = getattr(workers[k], name)(*args)
        except (StudentError, StudentTimeout, StudentCrash) as exc:
            results[k] = exc

    holder = threading.Thread(target=pause if pause_ms else lambda: None)
    holder.start()
    time.sleep(0.15 if pause_ms else 0)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads + [holder]:
        t.join()
    return results


@points(2)
@hint("one-script")
@contract("concurrent", "one-script")
def test_sixteen_processes_never_get_more_than_the_limit(lab, redis):
    """Sixteen processes at once never get more than the limit"""
    workers = lab.parallel(16)
    try:
        call = ("fixed_window", ("crowd", [[10, MIN]], 1, T0 + 5))
        results = together(redis, workers, [call] * 16)        # all of them in the same instant
        for _round in range(2):                                 # then as fast as they can
            results += together(redis, workers, [call] * 16, pause_ms=0)
    finally:
        for w in workers:
            w.close()
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("a call raised: {error}").format(error=errors[0])
    allowed = [res for res in results if res["allowed"]]
    assert len(allowed) == 10, _("expected 10 requests allowed in one window (the limit), saw {seen}").format(
        seen=len(allowed))
