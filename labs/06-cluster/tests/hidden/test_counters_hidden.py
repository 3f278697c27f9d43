"""Hidden tests of lab 06: only the grader runs these."""
import random
import threading
import time

from redis_course.cluster import default_primary, key_slot
from redis_course.l10n import _
from redis_course.labs.engine.testing import StudentCrash, StudentError, StudentTimeout, contract, hint, points

PAUSE_LUA = """
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= start + tonumber(ARGV[1]) * 1000
return math.floor(start / 1000)
"""  # the grader's own script: the server runs nothing else for ARGV[1] ms


def _together(redis, workers, calls, pause_ms=800):
    """Call ``calls[k]`` in ``workers[k % len(workers)]``, the first round while the grader's script
    holds the server (every process sends its first command before any is answered), the others as
    fast as they go.  Results in order, an exception in place of a call that raised."""
    results, n = [None] * len(calls), len(workers)

    def call(k):
        for i in range(k, len(calls), n):
            name, args = calls[i]
            try:
                results[i] = getattr(workers[k], name)(*args)
            except (StudentError, StudentTimeout, StudentCrash) as exc:
                results[i] = exc

    holder = threading.Thread(target=redis.eval, args=(PAUSE_LUA, 0, pause_ms))
    holder.start()
    time.sleep(0.15)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads + [holder]:
        t.join()
    return results


@points(3)
@hint("hot-race")
@contract("incr-hot-concurrent", "incr-hot-no-hash-tag")
def test_hot_counter_is_exact_under_concurrency_hidden(lab, redis):
    """The hot counter is exact under twelve processes"""
    calls = [("incr_hot", ("launch",)) for _ in range(480)]
    results = lab.run_concurrently(calls, processes=12)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected every incr_hot to return, saw one raise: {error}").format(error=errors[0])
    assert lab.hot_total("launch") == 480
    primaries = {default_primary(key_slot(k)) for k in redis.course_keys()}
    assert len(primaries) >= 2, _("expected the hits on at least two primaries, saw them all on one")


@points(1)
@hint("hot-total")
@contract("hot-total-own-shards", "hot-total-exact")
def test_hot_total_reads_only_its_shards_hidden(lab, redis):
    """hot_total reads only the counter's own shards"""
    for i in range(4):
        redis.set(redis.key("hot", "small", i), 10 * (i + 1))
    redis.set(redis.key("hot", "small", 4), 1000)            # not one of the 4 shards
    assert lab.hot_total("small", 4) == 100
    for _i in range(30):
        lab.incr_hot("small", 4)
    assert lab.hot_total("small", 4) == 130
    assert redis.get(redis.key("hot", "small", 4)) == "1000"


@points(2)
@hint("user-group")
@contract("user-incr-returns-new", "user-counters-values", "user-keys-one-slot")
def test_user_groups_hidden(lab, redis):
    """A user's counters are counted and read together"""
    assert lab.user_counters(5, []) == {}
    assert lab.user_counters(5, ["views"]) == {"views": 0}
    assert lab.user_incr(5, "views", 10) == 10
    assert lab.user_incr(5, "views", -3) == 7
    assert lab.user_incr("alice", "likes") == 1
    assert lab.user_counters("alice", ["likes", "views"]) == {"likes": 1, "views": 0}
    assert lab.user_counters(5, ["views"]) == {"views": 7}
    assert redis.get(redis.key("{user:alice}", "likes")) == "1"
    by_user = {}
    for k in redis.course_keys():
        by_user.setdefault(k.split("}")[0], set()).add(key_slot(k))
    assert all(len(s) == 1 for s in by_user.values()), _(
        "expected one user's counters in one slot, saw them in several")


@points(4)
@hint("once-race")
@contract("incr-once-concurrent")
def test_concurrent_retries_count_each_request_once_hidden(lab, redis):
    """Retries arriving at the same moment count each request once"""
    rng = random.Random(6)
    ids = [f"r{i}" for i in range(120)]
    amounts = {rid: rng.randint(1, 9) for rid in ids}
    # call i runs in process i % 12: the three attempts of one request id run at the same moment
    calls = [("incr_once", ("payments", rid, amounts[rid])) for rid in ids for _i in range(3)]
    workers = lab.parallel(12)
    try:
        results = _together(redis, workers, calls)     # the first twelve arrive in one instant
    finally:
        for w in workers:
            w.close()
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected every incr_once to return, saw one raise: {error}").format(error=errors[0])
    total = sum(amounts.values())
    stored = int(redis.get(redis.key("counter", "{payments}")) or 0)
    assert stored == total, _("expected the counter to be {total}, saw {seen}: was a request counted twice, "
                              "or not at all?").format(total=total, seen=stored)
    answers = {}
    for (_fn, (_name, rid, _by)), res in zip(calls, results):
        answers.setdefault(rid, set()).add(res)
    differ = sorted(rid for rid, a in answers.items() if len(a) > 1)
    assert not differ, _("expected every retry of a request to get the same answer, saw different answers for "
                         "{seen}").format(seen=differ[:5])
    assert sorted(a.pop() for a in answers.values())[-1] == total


@points(2)
@hint("once-slot")
@contract("incr-once-keys", "incr-once-marker-ttl", "incr-once-per-counter")
def test_markers_share_the_counters_slot_and_expire_hidden(lab, redis):
    """Markers share the counter's slot and expire"""
    assert lab.incr_once("signups", "a", 1, 60) == 1
    assert lab.incr_once("signups", "b", 2, 60) == 3
    assert lab.incr_once("logins", "a", 1, 60) == 1           # same request id, another counter
    keys = redis.course_keys()
    assert len(keys) == 5, _(
        "expected 2 counters and 3 markers, saw {seen}").format(
        seen=[redis.unprefixed(k) for k in keys])
    for name in ("signups", "logins"):
        group = [k for k in keys if "{%s}" % name in k]
        assert len({key_slot(k) for k in group}) == 1, _(
            "expected the keys of counter {name} in one slot, saw them in several").format(
            name=name)
    for k in keys:
        if ":req:" in k:
            assert 0 < redis.ttl(k) <= 60, _(
                "expected {key} to expire within 60 s, saw a TTL of {seen}").format(
                key=redis.unprefixed(k), seen=redis.ttl(k))
        else:
            assert redis.ttl(k) == -1, _("expected the counter itself never to expire, saw a TTL")
