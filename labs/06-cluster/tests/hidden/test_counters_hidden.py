"""Hidden tests of lab 06: only the grader runs these."""
import random

from redis_course.cluster import default_primary, key_slot
from redis_course.labs.testing import hint, points


@points(3)
@hint("hot-race")
def test_hot_counter_is_exact_under_concurrency_hidden(lab, redis):
    calls = [("incr_hot", ("launch",)) for _ in range(480)]
    results = lab.run_concurrently(calls, processes=12)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"incr_hot raised: {errors[0]}"
    assert lab.hot_total("launch") == 480
    primaries = {default_primary(key_slot(k)) for k in redis.course_keys()}
    assert len(primaries) >= 2, "every hit landed on one primary"


@points(1)
@hint("hot-total")
def test_hot_total_reads_only_its_shards_hidden(lab, redis):
    for i in range(4):
        redis.set(redis.key("hot", "small", i), 10 * (i + 1))
    redis.set(redis.key("hot", "small", 4), 1000)            # not one of the 4 shards
    assert lab.hot_total("small", 4) == 100
    for _ in range(30):
        lab.incr_hot("small", 4)
    assert lab.hot_total("small", 4) == 130
    assert redis.get(redis.key("hot", "small", 4)) == "1000"


@points(2)
@hint("user-group")
def test_user_groups_hidden(lab, redis):
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
    assert all(len(s) == 1 for s in by_user.values()), "one user's counters are in different slots"


@points(4)
@hint("once-race")
def test_concurrent_retries_count_each_request_once_hidden(lab, redis):
    rng = random.Random(6)
    ids = [f"r{i}" for i in range(120)]
    amounts = {rid: rng.randint(1, 9) for rid in ids}
    # call i runs in process i % 12: the three attempts of one request id run at the same moment
    calls = [("incr_once", ("payments", rid, amounts[rid])) for rid in ids for _ in range(3)]
    results = lab.run_concurrently(calls, processes=12)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"incr_once raised: {errors[0]}"
    total = sum(amounts.values())
    stored = int(redis.get(redis.key("counter", "{payments}")) or 0)
    assert stored == total, f"the counter is {stored}, expected {total}: a retry was counted again"
    answers = {}
    for (_, (_, rid, _)), res in zip(calls, results):
        answers.setdefault(rid, set()).add(res)
    assert all(len(a) == 1 for a in answers.values()), "retries of one request got different answers"
    assert sorted(a.pop() for a in answers.values())[-1] == total


@points(2)
@hint("once-slot")
def test_markers_share_the_counters_slot_and_expire_hidden(lab, redis):
    assert lab.incr_once("signups", "a", 1, 60) == 1
    assert lab.incr_once("signups", "b", 2, 60) == 3
    assert lab.incr_once("logins", "a", 1, 60) == 1           # same request id, another counter
    keys = redis.course_keys()
    assert len(keys) == 5, f"expected 2 counters and 3 markers, found {[redis.unprefixed(k) for k in keys]}"
    for name in ("signups", "logins"):
        group = [k for k in keys if "{%s}" % name in k]
        assert len({key_slot(k) for k in group}) == 1, f"the keys of counter {name} are in different slots"
    for k in keys:
        if ":req:" in k:
            assert 0 < redis.ttl(k) <= 60, f"{redis.unprefixed(k)} has TTL {redis.ttl(k)}, expected at most 60 s"
        else:
            assert redis.ttl(k) == -1, "the counter itself must not expire"
