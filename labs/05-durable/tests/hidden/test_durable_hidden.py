"""Hidden tests of lab 05: only the grader runs these."""
import threading

from redis_course.labs.testing import hint, points, student_raises
from redis_course.lessons.durable import lab_ledger, ledger_total

GRADER_CANARY = "grader-canary-05-durable-7d3f90b2"  # the release test proves this never leaves the repo


def q(redis, part):
    return redis.key("queue", part)


@points(1)
@hint("early")
def test_a_task_is_not_claimed_a_millisecond_early_hidden(lab, redis):
    task = lab.schedule("remind", 10_000)
    assert lab.claim(9_999, 1000) == []
    assert lab.claim(1, 1000) == []
    assert lab.claim(10_000, 1000) == [[task, "remind", 1]]


@points(3)
@hint("dead-worker")
def test_a_dead_workers_tasks_run_again_and_acked_ones_never_hidden(lab, redis):
    for i in range(1, 201):
        redis.zadd(q(redis, "due"), {str(i): i})
        redis.hset(q(redis, "tasks"), str(i), f"job{i}")
    redis.set(q(redis, "ids"), 200)
    calls = [("claim", (1000, 5000, 5))] * 48            # call k runs in process k % 4
    results = lab.run_concurrently(calls, processes=4)
    assert not [res for res in results if isinstance(res, Exception)], "claim raised"
    dead = {row[0] for k, rows in enumerate(results) if k % 4 == 0 for row in rows}   # process 0 dies
    alive = [row for k, rows in enumerate(results) if k % 4 != 0 for row in rows]
    assert dead and alive
    assert sorted([row[0] for row in alive] + sorted(dead)) == list(range(1, 201)), "a task was claimed twice or not at all"
    assert all(lab.ack(row[0], row[2]) is True for row in alive), "ack of a live claim did not return True"
    assert lab.recover(5999) == 0, "a lease was cut short"
    assert lab.recover(6000) == len(dead)
    again = lab.claim(6000, 5000, 500)
    assert sorted(row[0] for row in again) == sorted(dead), "the dead worker's tasks did not come back"
    assert {row[2] for row in again} == {2}
    assert all(lab.ack(row[0], row[2]) for row in again)
    assert lab.recover(10**12) == 0
    assert lab.claim(10**12, 5000, 500) == [], "an acknowledged task was handed out again"
    assert redis.zcard(q(redis, "due")) + redis.zcard(q(redis, "processing")) == 0
    assert redis.hlen(q(redis, "tasks")) == 0


@points(1)
@hint("lease")
def test_a_stale_ack_does_not_steal_the_new_claim_hidden(lab, redis):
    task = lab.schedule("export", 0)
    lab.claim(0, 100)
    lab.recover(100)
    lab.claim(100, 100)                  # attempt 2 owns it now
    assert lab.ack(task, 1) is False
    assert redis.zscore(q(redis, "processing"), str(task)) == 200
    assert redis.hget(q(redis, "tasks"), str(task)) == "export"


def _incrementers(redis, key, stop, counts, n=4):
    """n threads INCR key (the grader's own client is thread-safe) until stopped, 300 each at least."""
    def run(i):
        while not stop.is_set() or counts[i] < 300:
            redis.incr(key)
            counts[i] += 1
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return threads


@points(3)
@hint("lost-increments")
def test_flushes_under_traffic_lose_nothing_hidden(lab, redis):
    db = lab_ledger(redis)
    key = redis.key("counter", "clicks")
    stop, counts = threading.Event(), [0] * 4
    threads = _incrementers(redis, key, stop, counts)
    results = lab.run_concurrently([("flush", (db, "clicks"))] * 36, processes=3)
    stop.set()
    for t in threads:
        t.join()
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"flush raised: {errors[0]}"
    lab.flush(db, "clicks")
    lab.flush(db, "clicks")
    made = sum(counts)
    got = ledger_total(db, "clicks")
    assert got == made, f"{made} increments, {got} in the database ({made - got} lost)"
    assert sum(results) <= made, "flush reported more than was counted"


@points(2)
@hint("crash")
def test_crash_after_crash_then_flushes_hidden(lab, redis):
    db = lab_ledger(redis)
    key = redis.key("counter", "views")
    total = 0
    for step in ("committed", "applied", "claimed", "committed"):
        redis.incrby(key, 7)
        total += 7
        with student_raises("SimulatedCrash"):
            lab.flush(db, "views", step)
        lab.flush(db, "views")
        lab.flush(db, "views")
        assert ledger_total(db, "views") == total, f"after a crash at {step!r} and two flushes"
    assert lab.flush(db, "views") == 0
