"""Public tests of lab 05, the delayed queue: run them with `python3 run.py check 05`."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def q(redis, part):
    return redis.key("queue", part)


@points(2)
@hint("due")
@contract("schedule-ids", "claim-due-earliest-first", "claim-moves", "claim-reply")
def test_tasks_are_claimed_when_due_earliest_first(lab, redis):
    """Tasks are claimed when due, earliest first"""
    a = lab.schedule("send-a", 1000)
    b = lab.schedule("send-b", 2000)
    c = lab.schedule("send-c", 1500)
    assert [a, b, c] == [1, 2, 3]
    assert lab.claim(999, 500) == []
    assert lab.claim(1500, 500, 10) == [[1, "send-a", 1], [3, "send-c", 1]]
    assert redis.zrange(q(redis, "due"), 0, -1) == ["2"]
    assert redis.zrange(q(redis, "processing"), 0, -1, withscores=True) == [("1", 2000.0), ("3", 2000.0)]
    assert redis.hget(q(redis, "attempts"), "3") == "1"
    assert lab.claim(1500, 500, 10) == []


@points(1)
@hint("limit")
@contract("claim-limit")
def test_claim_takes_at_most_limit(lab, redis):
    """claim takes at most limit tasks"""
    for i in range(5):
        lab.schedule(f"t{i}", 100 + i)
    assert [row[0] for row in lab.claim(1000, 500, 2)] == [1, 2]
    assert [row[0] for row in lab.claim(1000, 500, 2)] == [3, 4]
    assert redis.zcard(q(redis, "due")) == 1


@points(2)
@hint("ack")
@contract("ack-live", "finish-unknown")
def test_ack_finishes_the_task_once(lab, redis):
    """ack finishes a task once"""
    task = lab.schedule("bill-42", 10)
    [[task_id, payload, attempt]] = lab.claim(20, 1000)
    assert (task_id, payload, attempt) == (task, "bill-42", 1)
    assert lab.ack(task_id, attempt) == "acked"
    assert lab.ack(task_id, attempt) == "unknown", _("expected a second ack of a finished task to answer \"unknown\"")
    assert lab.ack(99, 1) == "unknown", _("expected an ack of a task never scheduled to answer \"unknown\"")
    for part in ("due", "processing"):
        assert redis.zcard(q(redis, part)) == 0, _(
            "expected queue:{part} to no longer hold the acknowledged task").format(
            part=part)
    for part in ("tasks", "attempts", "dead"):
        assert not redis.hexists(q(redis, part), str(task_id)), _(
            "expected queue:{part} to no longer hold the acknowledged task").format(
            part=part)


@points(2)
@hint("lease")
@contract("recover-leases", "finish-stale", "live-lease")
def test_a_task_whose_lease_ends_comes_back_and_the_old_claim_is_stale(lab, redis):
    """A task whose lease ends comes back, and the old claim is stale"""
    task = lab.schedule("resize", 1000)
    assert lab.claim(1000, 500) == [[task, "resize", 1]]   # this worker dies: no ack
    assert lab.recover(1499) == {"requeued": 0, "dead": 0}
    assert lab.claim(1499, 500) == []
    assert lab.recover(1500) == {"requeued": 1, "dead": 0}
    assert redis.zscore(q(redis, "due"), str(task)) == 1500
    assert lab.ack(task, 1) == "stale", _(
        "expected the ack of attempt 1, whose lease ran out, to be refused as \"stale\"")
    assert redis.zscore(q(redis, "due"), str(task)) == 1500, _("expected a refused ack to leave the queue as it was")
    assert lab.claim(1500, 500) == [[task, "resize", 2]]
    assert lab.ack(task, 1) == "stale", _("expected the ack of attempt 1 to be refused while attempt 2 owns the task")
    assert lab.ack(task, 2) == "acked"


@points(2)
@hint("dead-letter")
@contract("fail-retry", "fail-dead", "dead-keeps-task", "dead-never-claimed")
def test_a_failing_task_is_retried_then_dead_lettered_with_its_reason(lab, redis):
    """A failing task is retried, then dead-lettered with its reason"""
    task = lab.schedule("charge-card", 0)
    [[_task, _payload, attempt]] = lab.claim(0, 1000)
    assert lab.fail(task, attempt, "timeout", 2000, 3) == "retry"
    assert redis.zscore(q(redis, "due"), str(task)) == 2000
    assert redis.zcard(q(redis, "processing")) == 0
    assert lab.claim(1999, 1000) == []
    assert lab.claim(2000, 1000) == [[task, "charge-card", 2]]
    assert lab.fail(task, 2, "timeout", 3000, 3) == "retry"
    assert lab.claim(3000, 1000) == [[task, "charge-card", 3]]
    assert lab.fail(task, 3, "card declined", 4000, 3) == "dead"
    assert redis.hget(q(redis, "dead"), str(task)) == "card declined"
    assert redis.zcard(q(redis, "due")) + redis.zcard(q(redis, "processing")) == 0
    assert redis.hget(q(redis, "tasks"), str(task)) == "charge-card", _("expected a dead task to keep its payload")
    assert lab.claim(10**9, 1000) == [], _("expected a dead task never to be handed out again, saw it handed out")
    assert lab.ack(task, 3) == "stale"


@points(3)
@hint("double-claim")
@contract("claim-concurrent")
def test_no_task_is_claimed_twice_by_concurrent_workers(lab, redis):
    """No task is claimed twice by concurrent workers"""
    for i in range(300):
        redis.zadd(q(redis, "due"), {str(i + 1): i % 7})
        redis.hset(q(redis, "tasks"), str(i + 1), f"job{i + 1}")
    redis.set(q(redis, "ids"), 300)
    results = lab.run_concurrently([("claim", (100, 60_000, 5))] * 80, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected every claim to return, saw one raise: {error}").format(error=errors[0])
    ids = [row[0] for rows in results for row in rows]
    twice = len(ids) - len(set(ids))
    assert twice == 0, _("expected no task claimed twice, saw {seen} claimed by two workers at once").format(seen=twice)
    assert sorted(ids) == list(range(1, 301))
