"""Public tests of lab 06: run them with `python3 run.py check 06`.

On a redis-server the grader's Redis runs in cluster mode (one node that serves every slot), so a
command whose keys are in different slots fails with CROSSSLOT as on a real cluster; the private
fakeredis server refuses the same commands.  The tests also compute the slots of your keys themselves.
"""

from redis_course.cluster import default_primary, key_slot
from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def slots_of(redis, pattern="*"):
    return {k: key_slot(k) for k in redis.course_keys(pattern)}


@points(2)
@hint("hot-total")
@contract("incr-hot-returns-none", "hot-total-exact")
def test_hot_counter_counts_every_hit(lab, redis):
    """The hot counter counts every hit"""
    for _i in range(50):
        assert lab.incr_hot("home") is None
    assert lab.hot_total("home") == 50
    stored = sum(int(redis.get(k)) for k in redis.course_keys())
    assert stored == 50, _("expected the keys to hold 50 hits in all, saw {seen}").format(seen=stored)
    # random shards may leave one empty: one more hit written straight into each of the 16 shards
    # makes the sum of every shard, the last one included, part of the test whatever the dice said
    for shard in range(16):
        redis.incr(redis.key("hot", "home", shard))
    total = lab.hot_total("home")
    assert total == 66, _(
        "expected 66 after one more hit in each of the shards hot:home:0 .. hot:home:15, "
        "saw {seen}: does hot_total read every shard?"
    ).format(seen=total)
    assert lab.hot_total("nothing-yet") == 0


@points(2)
@hint("hot-spread")
@contract("incr-hot-no-hash-tag", "incr-hot-one-shard")
def test_hot_counter_is_spread_over_the_cluster(lab, redis):
    """The hot counter is spread over the cluster"""
    for _i in range(200):
        lab.incr_hot("home")
    slots = slots_of(redis)
    assert len(slots) >= 4, _(
        "expected 200 hits spread over at least 4 keys, saw {seen} key(s): a hot counter needs shards"
    ).format(seen=len(slots))
    primaries = {default_primary(s) for s in slots.values()}
    assert len(primaries) >= 2, _(
        "expected shards on at least 2 of the 3 primaries, saw them all in slots {seen}, "
        "held by one: is there a hash tag in the shard names?"
    ).format(seen=sorted(set(slots.values())))


@points(2)
@hint("user-group")
@contract("user-incr-returns-new", "user-counters-values")
def test_user_counters_are_read_together(lab, redis):
    """A user's counters are read together"""
    assert [lab.user_incr(17, "views") for _ in range(3)] == [1, 2, 3]
    assert lab.user_incr(17, "likes", 2) == 2
    assert lab.user_counters(17, ["views", "likes", "shares"]) == {"views": 3, "likes": 2, "shares": 0}
    assert redis.get(redis.key("{user:17}", "views")) == "3"
    assert redis.get(redis.key("{user:17}", "likes")) == "2"


@points(2)
@hint("user-slot")
@contract("user-keys-one-slot")
def test_counters_of_one_user_share_a_slot(lab, redis):
    """The counters of one user share a slot"""
    for counter in ("views", "likes", "shares", "comments"):
        lab.user_incr(17, counter)
        lab.user_incr(18, counter)
    slots_17 = {key_slot(k) for k in redis.course_keys("*user:17*")}
    slots_18 = {key_slot(k) for k in redis.course_keys("*user:18*")}
    assert len(slots_17) == 1 and len(slots_18) == 1, _("expected one user's counters in one slot, saw them in several")
    assert slots_17 != slots_18, _(
        "expected two users in two slots, saw them share one: the hash tag is coarser than one user"
    )


@points(2)
@hint("once")
@contract("incr-once-first", "incr-once-retry", "incr-once-keys", "incr-once-marker-ttl")
def test_a_retried_increment_counts_once(lab, redis):
    """A retried increment counts once"""
    assert lab.incr_once("orders", "req-1") == 1
    assert lab.incr_once("orders", "req-1") == 1  # the retry: same answer, no second increment
    assert lab.incr_once("orders", "req-2", 5) == 6
    assert lab.incr_once("orders", "req-1") == 1
    assert redis.get(redis.key("counter", "{orders}")) == "6"
    marker = redis.key("counter", "{orders}", "req", "req-1")
    assert 0 < redis.ttl(marker) <= 3600, _("expected the marker of a request id to expire within 3600 s")
    assert key_slot(marker) == key_slot(redis.key("counter", "{orders}"))
