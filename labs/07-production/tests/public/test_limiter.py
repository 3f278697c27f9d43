"""Public tests of lab 07, the concurrency limiter: run them with `python3 run.py check 07`."""
import time

from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def server_ms(redis):
    """The server's clock (TIME), in ms."""
    sec, usec = redis.time()
    return sec * 1000 + usec // 1000


def holders(redis, name="jobs"):
    return dict(redis.zrange(redis.key("sem", name), 0, -1, withscores=True))


@points(2)
@hint("limit")
@contract("acquire-up-to-limit", "acquire-score")
def test_limit_holders_then_refused(lab, redis):
    """The first `limit` holders get a slot, the next one is refused."""
    before = server_ms(redis)
    got = [lab.acquire("jobs", h, 3, 60_000) for h in ("a", "b", "c", "d")]
    after = server_ms(redis)
    assert got == [True, True, True, False], _("acquire with limit 3, four holders: {got}", got=got)
    held = holders(redis)
    assert set(held) == {"a", "b", "c"}, _("the sorted set sem:jobs holds {held}", held=sorted(held))
    for h, end in held.items():
        assert before + 60_000 <= end <= after + 60_000, _(
            "the score of {holder} is not the end of its lease on the server's clock (now + lease_ms)", holder=h)


@points(2)
@hint("holder")
@contract("release-holder-only", "release-once")
def test_only_the_holder_can_release_its_slot(lab, redis):
    """A stranger's release frees nothing; the holder's release frees its slot once."""
    assert lab.acquire("jobs", "a", 1, 60_000) is True
    assert lab.release("jobs", "stranger") is False, _("release by a holder that holds nothing must return False")
    assert set(holders(redis)) == {"a"}, _("a stranger's release took someone else's slot")
    assert lab.acquire("jobs", "b", 1, 60_000) is False
    assert lab.release("jobs", "a") is True
    assert lab.release("jobs", "a") is False, _("a second release of the same slot must return False")
    assert lab.acquire("jobs", "b", 1, 60_000) is True


@points(2)
@hint("expiry")
@contract("acquire-drops-ended", "release-ended-false")
def test_an_ended_lease_frees_its_slot(lab, redis):
    """A lease that has ended on the server's clock counts for nothing."""
    redis.zadd(redis.key("sem", "jobs"), {"crashed": server_ms(redis) - 1})
    assert lab.acquire("jobs", "live", 1, 60_000) is True, _(
        "the only holder's lease has ended: its slot must be free")
    assert set(holders(redis)) == {"live"}, _("the ended lease is still in sem:jobs")
    assert lab.release("jobs", "crashed") is False, _("the release of an ended lease must return False")


@points(2)
@hint("refresh")
@contract("refresh-extends", "refresh-never-revives")
def test_refresh_extends_a_live_lease_and_never_revives_an_ended_one(lab, redis):
    """refresh extends a live lease; an ended lease stays ended."""
    assert lab.acquire("jobs", "a", 1, 1_000) is True
    before = server_ms(redis)
    assert lab.refresh("jobs", "a", 60_000) is True
    assert holders(redis)["a"] >= before + 60_000, _("refresh did not move the end of the lease to now + lease_ms")
    key = redis.key("sem", "jobs")
    ended = server_ms(redis) - 1
    redis.zadd(key, {"a": ended})
    assert lab.refresh("jobs", "a", 60_000) is False, _("refresh revived a lease that had ended")
    assert redis.zscore(key, "a") in (None, ended), _("refresh revived a lease that had ended")
    assert lab.refresh("jobs", "nobody", 60_000) is False
    assert redis.zscore(key, "nobody") is None, _("refresh gave a slot to a holder that held none")
    assert lab.acquire("jobs", "b", 1, 60_000) is True


@points(3)
@hint("race")
@contract("acquire-atomic")
def test_never_more_than_limit_holders_from_eight_processes(lab, redis):
    """Eight processes acquiring at the same moment never hold more than `limit` slots."""
    rounds, procs, limit = 8, 8, 2
    calls = [("acquire", (f"r{i // procs}", f"h{i}", limit, 60_000)) for i in range(rounds * procs)]
    results = lab.run_concurrently(calls, processes=procs)
    errors = [res for res in results if isinstance(res, Exception)]
    if errors:
        raise errors[0]
    for k in range(rounds):
        granted = sum(results[k * procs:(k + 1) * procs])
        held = redis.zcard(redis.key("sem", f"r{k}"))
        assert granted == held == limit, _(
            "limit {limit}: {granted} acquisitions succeeded, {held} holders in the sorted set",
            limit=limit, granted=granted, held=held)


@points(2)
@hint("crash")
@contract("crashed-holder-frees")
def test_a_crashed_holder_gives_its_slot_back_when_its_lease_ends(lab, redis):
    """A holder process that dies without releasing keeps its slot only until its lease ends."""
    [worker] = lab.parallel(1)
    assert worker.acquire("jobs", "worker-1", 1, 4_000) is True
    worker.close()                                   # the process dies holding the slot
    end = holders(redis)["worker-1"]
    refused = lab.acquire("jobs", "worker-2", 1, 4_000)
    if server_ms(redis) < end:                       # a machine too busy to ask in time proves nothing here
        assert refused is False, _("the crashed holder's lease has not ended yet")
    while server_ms(redis) <= end:
        time.sleep(0.05)
    assert lab.acquire("jobs", "worker-2", 1, 4_000) is True, _(
        "the crashed holder's lease ended, its slot was not given back")
