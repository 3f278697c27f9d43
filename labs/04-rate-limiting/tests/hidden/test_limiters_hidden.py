"""Hidden tests of lab 04: only the grader runs these."""
import threading
import time

import pytest

from redis_course.l10n import _
from redis_course.labs.engine.testing import StudentCrash, StudentError, StudentTimeout, contract, hint, points

GRADER_CANARY = "grader-canary-04-rate-limiting-3b9e71c4"  # must never appear in a student release

T0 = 1_800_000_000_000  # ms; the start of a minute
MIN = 60_000
NAMES = ("fixed_window", "sliding_window", "token_bucket")


PAUSE_LUA = """
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= start + tonumber(ARGV[1]) * 1000
return math.floor(start / 1000)
"""  # the grader's own script: the server runs nothing else for ARGV[1] ms; returns when it began (ms)


def _together(redis, workers, calls, pause_ms=800):
    """Call ``calls[k]`` in ``workers[k]`` at once; with ``pause_ms``, while the grader's script holds
    the server, so that every process has sent its first command before any is answered.  Returns
    (results, a time in server ms before which none of the calls ran, whether the server was held
    when they were sent); an exception in place of a call that raised."""
    results, began = [None] * len(calls), {}

    def pause():
        began["at"] = redis.eval(PAUSE_LUA, 0, pause_ms)

    def call(k):
        name, args = calls[k]
        try:
            results[k] = getattr(workers[k], name)(*args)
        except (StudentError, StudentTimeout, StudentCrash) as exc:
            results[k] = exc

    holder = threading.Thread(target=pause if pause_ms else lambda: None)
    holder.start()
    time.sleep(0.15 if pause_ms else 0)
    sent = int(time.time() * 1000)             # the server's TIME reads the same clock
    threads = [threading.Thread(target=call, args=(k,)) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads + [holder]:
        t.join()
    if not pause_ms:
        return results, None, False
    # the calls ran after the pause if it had begun when they were sent (on a very busy machine it
    # may not have: then all that is known is that they ran after they were sent)
    held = began["at"] <= sent
    return results, began["at"] + pause_ms if held else sent, held


def _margin(took_ms):
    """How much earlier than exact a right key may expire: 5 ms, plus the time the call took.  A script
    that reads TIME and sets a TTL of "that instant minus now" may have its TTL counted from a time
    the server took before that TIME (fakeredis takes it when the EVAL command begins), so the key
    expires early by what the script ran before its TIME: under a millisecond on a quiet server,
    tens of ms on a busy machine.  The call's own round trip bounds that, and stays far below what
    the mistakes these tests are for are off by (a TTL not renewed, the application's clock: 500 ms
    and more)."""
    return 5 + max(0, took_ms)


def _server_ms(redis):
    sec, usec = redis.time()
    return sec * 1000 + usec // 1000


def _expiry(redis, key):
    """(the server's time in ms, the key's PTTL), read in one MULTI/EXEC."""
    with redis.pipeline() as tx:
        tx.time()
        tx.pttl(key)
        (sec, usec), pttl = tx.execute()
    return sec * 1000 + usec // 1000, pttl


def _keys_of(redis, client):
    keys = redis.course_keys(f"*{client}*")
    assert keys, _("expected a key holding the state of client {client}, saw none").format(client=client)
    return keys


def _crowd(lab, redis, name, clients=4, per_client=40):
    # cost 2 against 20 per minute (and a looser 50 per 10 minutes): 10 requests per client get in
    limits = [[20, MIN], [50, 10 * MIN]]
    calls = [(name, (f"crowd-{name}-{i % clients}", limits, 2, T0 + 7)) for i in range(clients * per_client)]
    workers = lab.parallel(16)
    try:
        results = []
        for first in range(0, len(calls), 16):        # the first 16 in one instant, then as fast as they go
            got, _ran, _held = _together(redis, workers, calls[first:first + 16], pause_ms=800 if first == 0 else 0)
            results += got
    finally:
        for w in workers:
            w.close()
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("a call raised: {error}").format(error=errors[0])
    for c in range(clients):
        mine = [res for (_name, args), res in zip(calls, results) if args[0].endswith(f"-{c}")]
        allowed = [res for res in mine if res["allowed"]]
        assert len(allowed) == 10, _("{name}: expected 10 requests of cost 2 allowed for one client (20 units), "
                                     "saw {seen}").format(name=name, seen=len(allowed))
        told = sorted(res["remaining"] for res in allowed)
        assert told == list(range(0, 20, 2)), _("{name}: expected every allowed request to be told a different "
                                                "'remaining' (0, 2, ..., 18), saw {seen}").format(name=name, seen=told)


@points(2)
@hint("one-script")
@contract("concurrent", "one-script")
def test_fixed_window_under_sixteen_processes_hidden(lab, redis):
    """The fixed window holds under sixteen processes"""
    _crowd(lab, redis, "fixed_window")


@points(2)
@hint("one-script")
@contract("concurrent", "one-script")
def test_sliding_window_under_sixteen_processes_hidden(lab, redis):
    """The sliding window holds under sixteen processes"""
    _crowd(lab, redis, "sliding_window")


@points(2)
@hint("one-script")
@contract("concurrent", "one-script")
def test_token_bucket_under_sixteen_processes_hidden(lab, redis):
    """The token bucket holds under sixteen processes"""
    _crowd(lab, redis, "token_bucket")


@points(2)
@hint("ttl")
@contract("ttl-on-every-key")
def test_every_key_has_a_ttl_hidden(lab, redis):
    """Every key has a TTL, also on the server's clock"""
    for name in NAMES:
        fn = getattr(lab, name)
        for i in range(12):
            fn("ttl-a", [[5, 1000], [8, MIN]], 2, T0 + 1000 * i)
        for _i in range(3):
            fn("ttl-b", [[5, 3_600_000]], 1)          # the server's clock
    keys = redis.course_keys()
    assert keys, _("expected a key to be written, saw none")
    for k in keys:
        assert redis.pttl(k) > 0, _(
            "expected every key to have a TTL, saw {key} without one").format(
            key=redis.unprefixed(k))


@points(2)
@hint("fixed-boundary")
@contract("fixed-window")
def test_fixed_window_boundaries_hidden(lab, redis):
    """Fixed windows of two limits start and end on the clock"""
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
@contract("sliding-window")
def test_sliding_window_lets_entries_leave_exactly_hidden(lab, redis):
    """Units leave the sliding window exactly on time, also with a cost"""
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
    # three units must leave for cost 4: the two of t=0 and one of t=3000, so the wait is the latter's
    assert g(4000, 4) == {"allowed": False, "remaining": 1, "retry_after_ms": 9000}
    assert g(9999, 3) == {"allowed": False, "remaining": 1, "retry_after_ms": 1}
    assert g(10_000, 3) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}
    assert g(12_999, 1) == {"allowed": False, "remaining": 0, "retry_after_ms": 1}
    assert g(13_000, 2) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}


@points(2)
@hint("bucket-refill")
@contract("token-bucket")
def test_token_bucket_refills_continuously_hidden(lab, redis):
    """Buckets refill continuously and keep the fraction of a token"""
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
@contract("retry-exact", "retry-longest-wait")
def test_retry_after_is_exact_hidden(lab, redis):
    """retry_after_ms is exact to the millisecond"""
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
                assert fn(client, limits, cost, now + t)["allowed"] is True, _(
                    "{name} {tag}: expected to be allowed, saw it denied").format(
                    name=name, tag=tag)
            d = fn(client, limits, cost, now + 1017)
            assert d["allowed"] is False and d["retry_after_ms"] > 0, _(
                "{name} {tag}: expected a denial with a wait, saw {seen}").format(
                name=name, tag=tag, seen=d)
            later = now + 1017 + d["retry_after_ms"]
            if d["retry_after_ms"] > 1:
                assert fn(client, limits, cost, later - 1)["allowed"] is False, _(
                    "{name} {tag}: expected a denial 1 ms before retry_after_ms, saw it allowed").format(
                    name=name, tag=tag)
            assert fn(client, limits, cost, later)["allowed"] is True, _(
                "{name} {tag}: expected to be allowed at retry_after_ms, saw it denied").format(
                name=name, tag=tag)


@points(2)
@hint("all-or-nothing")
@contract("all-or-nothing")
def test_a_denied_request_counts_in_no_limit_hidden(lab, redis):
    """A denied request is counted in no limit"""
    limits = [[3, MIN], [2, 1000]]            # the minute first: it allows while the second denies
    last_retry = {"fixed_window": MIN - 1001, "sliding_window": MIN - 1001, "token_bucket": 18_999}
    for name in NAMES:
        fn = getattr(lab, name)
        f = lambda t: fn(f"atomic-{name}", limits, 1, T0 + t)  # noqa: E731
        assert [f(0)["allowed"], f(0)["allowed"]] == [True, True], name
        assert [f(t)["allowed"] for t in (10, 20, 30, 40)] == [False] * 4, _(
            "{name}: expected denials while the second is full").format(
            name=name)
        assert f(1000) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}, \
            _("{name}: expected the denied requests not to count in the minute, saw them counted").format(name=name)
        assert f(1001) == {"allowed": False, "remaining": 0, "retry_after_ms": last_retry[name]}, name


@points(2)
@hint("cost")
@contract("cost-units")
def test_cost_is_taken_from_every_limiter_hidden(lab, redis):
    """Every limiter takes the cost, and a denied request takes nothing"""
    retry = {"fixed_window": MIN - 1000, "sliding_window": MIN - 1000, "token_bucket": 5000}
    for name in NAMES:
        fn = getattr(lab, name)
        f = lambda t, cost: fn(f"cost-{name}", [[10, MIN]], cost, T0 + t)  # noqa: E731
        assert f(0, 4) == {"allowed": True, "remaining": 6, "retry_after_ms": 0}, name
        assert f(0, 4) == {"allowed": True, "remaining": 2, "retry_after_ms": 0}, name
        assert f(1000, 3) == {"allowed": False, "remaining": 2, "retry_after_ms": retry[name]}, name
        assert f(1000, 2) == {"allowed": True, "remaining": 0, "retry_after_ms": 0}, \
            _("{name}: expected the denied request to take no units, saw it take some").format(name=name)


@points(1)
@hint("isolation")
@contract("other-keys-untouched", "one-key-per-client")
def test_other_clients_and_keys_are_untouched_hidden(lab, redis):
    """Other clients and other keys are untouched"""
    other = redis.key("session", "carol")
    redis.set(other, "keep-me", px=600_000)
    for name in NAMES:
        fn = getattr(lab, name)
        for _i in range(5):
            fn("dave", [[2, MIN]], 1, T0)
        assert fn("erin", [[2, MIN]], 1, T0) == {"allowed": True, "remaining": 1, "retry_after_ms": 0}, name
    assert redis.get(other) == "keep-me"
    assert 590_000 < redis.pttl(other) <= 600_000


@points(1)
@hint("server-clock")
@pytest.mark.parametrize("name", NAMES)
@contract("server-clock")
def test_without_now_the_servers_clock_is_used_hidden(lab, redis, name):
    """Without now_ms, the server's clock is used"""
    fn = getattr(lab, name)
    got = [fn(f"clock-{name}", [[2, 3_600_000], [5, 7_200_000]], 1) for _ in range(3)]
    assert [d["allowed"] for d in got] == [True, True, False]
    assert 0 < got[2]["retry_after_ms"] <= 3_600_000


@points(2)
@hint("ttl-exact")
@contract("ttl-while-it-matters", "ttl-milliseconds", "ttl-never-longer")
def test_ttls_follow_the_servers_clock_hidden(lab, redis):
    """With the server's clock, every write sets a TTL in ms for as long as the state matters"""
    limits, window = [[2, 1300]], 1300        # not a whole number of seconds
    for name in NAMES:
        getattr(lab, name)(f"ttl-{name}", limits, 1)
    time.sleep(0.6)
    for name in NAMES:
        before = _server_ms(redis)
        d = getattr(lab, name)(f"ttl-{name}", limits, 1)
        margin = _margin(_server_ms(redis) - before)
        assert d["allowed"] is True, _("{name}: expected the second request to be allowed, saw {seen}").format(
            name=name, seen=d)
        # the second request's state matters at least until: its unit leaves the window (log), the
        # window it fell in ends (fixed), its bucket is full again (at least 650 ms: 2 per 1300 ms)
        matters = {"sliding_window": before + window, "fixed_window": (before // window + 1) * window,
                   "token_bucket": before + window // 2}[name]
        # a key may expire between the call and this read when the machine is slow and the state's
        # time is up (a fixed window that ended): gone is right then, and only then
        keys = redis.course_keys(f"*ttl-{name}*")
        if not keys:
            assert _server_ms(redis) >= matters - margin, _(
                "expected a key holding the state of client {client}, saw none").format(client=f"ttl-{name}")
        for key in keys:
            now, pttl = _expiry(redis, key)
            if pttl == -2 and now >= matters - margin:
                continue
            assert now + pttl >= matters - margin, _(
                "{name}: expected the key to live until at least {need} ms after the request, saw it expire "
                "{seen} ms after (was its TTL refreshed by this write, in ms?)").format(
                name=name, need=matters - before, seen=now + pttl - before)
            assert pttl <= window, _("{name}: expected a TTL of at most the longest window ({window} ms), "
                                     "saw {seen} ms").format(name=name, window=window, seen=pttl)


@points(2)
@hint("ttl-slack")
@contract("ttl-slack")
def test_ttls_under_a_controlled_clock_have_the_slack_hidden(lab, redis):
    """Under a controlled clock every key gets 60,000 ms of slack and outlives the test's real time"""
    window = 1300
    t = (T0 // window + 1) * window + 1          # 1 ms into a window: that window ends 1299 ms later
    slack = 60_000
    cases = {"fixed_window": (1, window - 1), "sliding_window": (1, window), "token_bucket": (2, window)}
    for name, (cost, matters) in cases.items():
        before = _server_ms(redis)
        assert getattr(lab, name)(f"slack-{name}", [[2, window]], cost, t)["allowed"] is True, name
        for key in _keys_of(redis, f"slack-{name}"):
            now, pttl = _expiry(redis, key)
            assert pttl + (now - before) >= matters + slack - 5, _(
                "{name}: expected a TTL of at least {need} ms ({matters} ms + 60,000 ms of slack), saw {seen} ms"
            ).format(name=name, need=matters + slack, matters=matters, seen=pttl + now - before)
            assert pttl <= window + slack, _(
                "{name}: expected a TTL of at most the longest window + 60,000 ms ({most} ms), saw {seen} ms"
            ).format(name=name, most=window + slack, seen=pttl)
    time.sleep(window / 1000 + 0.1)              # the window's length passes in real time, not on the clock
    expected = {"fixed_window": {"allowed": True, "remaining": 0, "retry_after_ms": 0},
                "sliding_window": {"allowed": True, "remaining": 0, "retry_after_ms": 0},
                "token_bucket": {"allowed": False, "remaining": 0, "retry_after_ms": 150}}
    for name, want in expected.items():
        got = getattr(lab, name)(f"slack-{name}", [[2, window]], 1, t + 500)
        assert got == want, _("{name}: 500 ms later on the controlled clock expected {want}, saw {seen} "
                              "(did the key expire on the real clock?)").format(name=name, want=want, seen=got)


@points(2)
@hint("server-clock")
@contract("server-clock-when-run")
def test_the_servers_clock_is_read_when_the_script_runs_hidden(lab, redis):
    """Without now_ms, the time is the server's when the script runs, not the application's"""
    limits = [[1, 1000], [10, MIN]]
    workers = lab.parallel(3)
    try:
        for attempt in range(3):
            now = _server_ms(redis)
            time.sleep((1000 - now % 1000 + 5) / 1000)             # the start of a second on the server
            first = {}
            for w, name in zip(workers, NAMES):
                first[name] = (_server_ms(redis), getattr(w, name)(f"when{attempt}-{name}", limits, 1))
            time.sleep(0.35)
            # the grader holds the server for 800 ms: the requests are sent about 0.5 s after the first
            # ones, and run more than 1 s after them
            calls = [(name, (f"when{attempt}-{name}", limits, 1)) for name in NAMES]
            got, ran, held = _together(redis, workers, calls)
            took = _server_ms(redis) - ran     # the three scripts ran, one after the other, in this time
            if held:
                break
    finally:
        for w in workers:
            w.close()
    assert held, _("expected the grader to hold the server while the requests were sent, saw it could not "
                   "(the machine is too busy): check again")
    for name, d in zip(NAMES, got):
        assert not isinstance(d, Exception), _("{name} raised: {error}").format(name=name, error=d)
        assert first[name][1]["allowed"] is True, name
        assert d["allowed"] is True, _(
            "{name}: expected the request that ran more than 1 s after the first one to be allowed (1 per "
            "second), saw {seen}: was the time read before the script ran?").format(name=name, seen=d)
    matters = {"sliding_window": ran + MIN, "fixed_window": (ran // MIN + 1) * MIN,
               "token_bucket": first["token_bucket"][0] + 2 * MIN // 10}
    for name in NAMES:
        for key in _keys_of(redis, f"when{attempt}-{name}"):
            now, pttl = _expiry(redis, key)
            assert now + pttl >= matters[name] - _margin(took), _(
                "{name}: expected the key to live until at least {need} ms after the script ran, saw {seen} ms "
                "(was the expiry computed from the application's clock?)").format(
                name=name, need=matters[name] - ran, seen=now + pttl - ran)


@points(1)
@hint("sliding-memory")
@contract("sliding-memory")
def test_the_sliding_log_keeps_only_what_its_longest_window_holds_hidden(lab, redis):
    """The sliding log keeps no unit that left its longest window"""
    limits = [[3, 1000], [4, 5000]]
    for i in range(30):                      # 2 units every 700 ms: the log never holds more than 4 at once
        lab.sliding_window("memo", limits, 2, T0 + 700 * i)
    sizes = {"zset": redis.zcard, "list": redis.llen, "hash": redis.hlen, "set": redis.scard}
    for key in _keys_of(redis, "memo"):
        kind = redis.type(key)
        size = sizes[kind](key) if kind in sizes else 0
        assert size <= 4, _("sliding_window: expected the log to hold at most 4 units (the largest limit) after 30 "
                            "requests 700 ms apart, saw {seen} entries in {key}: are the units that left the longest "
                            "window removed?", seen=size, key=redis.unprefixed(key))
