"""Hidden tests of lab 05: only the grader runs these."""
import random
import threading
import time

import pytest

from redis_course.l10n import _
from redis_course.labs.engine.testing import InjectedCrash, contract, hint, points

GRADER_CANARY = "grader-canary-05-durable-7d3f90b2"  # the release test proves this never leaves the repo


def q(redis, part):
    return redis.key("queue", part)


@points(1)
@hint("early")
@contract("claim-due-earliest-first")
def test_a_task_is_not_claimed_a_millisecond_early_hidden(lab, redis):
    """A task is not claimed a millisecond before it is due"""
    task = lab.schedule("remind", 10_000)
    assert lab.claim(9_999, 1000) == []
    assert lab.claim(1, 1000) == []
    assert lab.claim(10_000, 1000) == [[task, "remind", 1]]


@points(3)
@hint("dead-worker")
@contract("dead-never-claimed", "claim-concurrent", "recover-leases")
def test_a_dead_workers_tasks_run_again_and_acked_ones_never_hidden(lab, redis):
    """A dead worker's tasks run again, acknowledged ones never"""
    for i in range(1, 201):
        redis.zadd(q(redis, "due"), {str(i): i})
        redis.hset(q(redis, "tasks"), str(i), f"job{i}")
    redis.set(q(redis, "ids"), 200)
    calls = [("claim", (1000, 5000, 5))] * 48            # call k runs in process k % 4
    results = lab.run_concurrently(calls, processes=4)
    assert not [res for res in results if isinstance(res, Exception)], _(
        "expected every claim to return, saw one raise")
    dead = {row[0] for k, rows in enumerate(results) if k % 4 == 0 for row in rows}   # process 0 dies
    alive = [row for k, rows in enumerate(results) if k % 4 != 0 for row in rows]
    assert dead and alive
    assert sorted([row[0] for row in alive] + sorted(dead)) == list(range(1, 201)), _(
        "expected every task claimed exactly once, saw one claimed twice or not at all")
    assert all(lab.ack(row[0], row[2]) == "acked" for row in alive), _(
        "expected the ack of a live claim to be accepted, saw it refused")
    assert lab.recover(5999, 3) == {"requeued": 0, "dead": 0}, _(
        "expected no lease to end before its time, saw one cut short")
    assert lab.recover(6000, 3) == {"requeued": len(dead), "dead": 0}
    again = lab.claim(6000, 5000, 500)
    assert sorted(row[0] for row in again) == sorted(dead), _(
        "expected the dead worker's tasks to come back, saw them missing")
    assert {row[2] for row in again} == {2}
    assert all(lab.ack(row[0], row[2]) == "acked" for row in again)
    assert lab.recover(10**12, 3) == {"requeued": 0, "dead": 0}
    assert lab.claim(10**12, 5000, 500) == [], _(
        "expected an acknowledged task never to be handed out again, saw it handed out")
    assert redis.zcard(q(redis, "due")) + redis.zcard(q(redis, "processing")) == 0
    assert redis.hlen(q(redis, "tasks")) == 0


@points(1)
@hint("lease")
@contract("recover-at-now")
def test_a_recovered_task_is_due_at_the_time_of_the_recovery_hidden(lab, redis):
    """A task taken back from an ended lease is due at the moment of the recovery, not at its lease's end"""
    redis.zadd(q(redis, "due"), {"1": 100})
    redis.hset(q(redis, "tasks"), "1", "job1")
    redis.set(q(redis, "ids"), 1)
    assert [row[0] for row in lab.claim(1000, 500, 1)] == [1]      # its lease ends at 1500
    assert lab.recover(7000, 3) == {"requeued": 1, "dead": 0}
    seen = redis.zscore(q(redis, "due"), "1")
    assert seen == 7000, _("expected the recovered task to be due at 7000 (the recovery's now_ms), saw {seen}",
                           seen=seen)
    assert lab.claim(6999, 500, 1) == [], _("expected the recovered task not to be handed out before 7000")
    assert [row[0] for row in lab.claim(7000, 500, 1)] == [1]


@points(1)
@hint("lease")
@contract("finish-stale", "finish-unknown", "live-lease")
def test_a_stale_ack_or_fail_does_not_touch_the_new_claim_hidden(lab, redis):
    """A stale ack or fail does not touch the new claim"""
    task = lab.schedule("export", 0)
    lab.claim(0, 100)
    lab.recover(100, 3)
    lab.claim(100, 100)                  # attempt 2 owns it now
    assert lab.ack(task, 1) == "stale"
    assert lab.fail(task, 1, "late report", 500, 3) == "stale"
    assert lab.fail(task, 3, "forged attempt", 500, 3) == "stale"
    assert redis.zscore(q(redis, "processing"), str(task)) == 200
    assert redis.zcard(q(redis, "due")) == 0
    assert not redis.hexists(q(redis, "dead"), str(task))
    assert redis.hget(q(redis, "tasks"), str(task)) == "export"
    assert lab.fail(77, 1, "no such task", 500, 3) == "unknown"


@points(2)
@hint("poison")
@contract("recover-leases", "fail-dead", "dead-never-claimed")
def test_a_task_that_kills_its_workers_is_dead_lettered_after_max_attempts_hidden(lab, redis):
    """A task that kills its workers is dead-lettered after max_attempts"""
    poison = lab.schedule("parse-huge-file", 0)
    fine = lab.schedule("send-mail", 0)
    assert lab.claim(0, 1000) == [[poison, "parse-huge-file", 1], [fine, "send-mail", 1]]
    assert lab.ack(fine, 1) == "acked"
    # the worker that took the poison task died: its lease runs out
    assert lab.recover(1000, 2) == {"requeued": 1, "dead": 0}, _("expected attempt 1 of 2 that ran out to be retried")
    assert lab.claim(1000, 1000) == [[poison, "parse-huge-file", 2]]
    # and so did the next one
    assert lab.recover(2000, 2) == {"requeued": 0, "dead": 1}, _(
        "expected attempt 2 of 2 that ran out to be dead-lettered")
    assert redis.hget(q(redis, "dead"), str(poison)) == "lease expired"
    assert lab.claim(10**9, 1000) == [], _("expected a dead task never to be handed out again, saw it handed out")
    once = lab.schedule("flaky", 0)
    [[_task, _payload, attempt]] = lab.claim(10**9, 1000)
    assert lab.fail(once, attempt, "no retries allowed", 10**9, 1) == "dead"
    assert redis.hget(q(redis, "dead"), str(once)) == "no retries allowed"


CUSTOMERS = ("acme", "globex", "initech", "umbrella", "hooli")


def _producers(redis, stop, counts, n=4):
    """n threads HINCRBY usage <customer> <units> (the grader's client is thread-safe) until stopped,
    300 times each at least; counts[i] holds what thread i added per customer."""
    key = redis.key("usage")

    def run(i):
        rng, done = random.Random(i), 0
        while not stop.is_set() or done < 300:
            customer, units = rng.choice(CUSTOMERS), rng.randint(1, 5)
            redis.hincrby(key, customer, units)
            counts[i][customer] = counts[i].get(customer, 0) + units
            done += 1
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return threads


@points(3)
@hint("lost-increments")
@contract("flush-concurrent", "flush-batch-once")
def test_flushes_under_traffic_lose_nothing_hidden(lab, redis, box):
    """Concurrent flushes under traffic lose nothing and count nothing twice"""
    db = box.ledger_create()
    stop, counts = threading.Event(), [{} for _ in range(4)]
    threads = _producers(redis, stop, counts)
    results = lab.run_concurrently([("flush", (db,))] * 36, processes=3)
    stop.set()
    for t in threads:
        t.join()
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected every flush to return, saw one raise: {error}").format(error=errors[0])
    lab.flush(db)
    lab.flush(db)
    for customer in CUSTOMERS:
        made = sum(c.get(customer, 0) for c in counts)
        got = box.ledger_total(db, customer)
        assert got == made, _("{customer}: expected the {made} units counted in the database, saw {seen}").format(
            customer=customer, made=made, seen=got)
        reported = sum(res.get(customer, 0) for res in results)
        assert reported <= made, _(
            "{customer}: expected flush to report at most what was counted, saw more").format(
            customer=customer)


@points(2)
@hint("crash")
@contract("flush-crash-recovery", "flush-crash-steps")
def test_crash_after_crash_then_flushes_hidden(lab, redis, box):
    """Crash after crash, the next flushes finish the job"""
    db = box.ledger_create()
    key = redis.key("usage")
    total = 0
    for step in ("committed", "applied", "claimed", "committed"):
        redis.hincrby(key, "acme", 7)
        redis.hincrby(key, "globex", 1)
        total += 7
        lab.faults.crash_at(step)
        with pytest.raises(InjectedCrash):
            lab.flush(db)
        assert int(redis.hget(key, "acme") or 0) == 0, _(
            "expected the batch to have left the live hash before the crash at {step}, saw it still there").format(
            step=step)
        lab.flush(db)
        lab.flush(db)
        assert box.ledger_total(db, "acme") == total, _(
            "expected {total} units of acme after a crash at {step} and two flushes, saw {seen}").format(
            total=total, step=step, seen=box.ledger_total(db, "acme"))
        assert box.ledger_total(db, "globex") == total // 7
    assert lab.flush(db) == {}


@points(2)
@hint("claim-crash")
@contract("claim-crash")
def test_a_worker_dying_inside_claim_loses_no_task_hidden(lab, redis):
    """A worker that dies in the middle of claim loses no task"""
    for budget in (1, 2, 3):
        ids = [str(100 * budget + i) for i in range(3)]
        for task in ids:
            redis.zadd(q(redis, "due"), {task: 10})
            redis.hset(q(redis, "tasks"), task, f"job{task}")
        lab.faults.arm_crash(budget)         # the worker dies after this many round trips
        try:
            lab.claim(100, 1000)
        except InjectedCrash:
            pass
        lab.faults.arm_crash(None)
        # whatever the worker did before it died, its leases run out and the tasks come back
        lab.recover(1100, 5)
        back = sorted(str(row[0]) for row in lab.claim(1100, 1000, 10))
        assert back == ids, _("expected tasks {ids} to be claimed again once the dead worker's leases ran out, "
                              "saw {seen} (it died after {n} round trip(s) of claim)").format(
            ids=ids, seen=back, n=budget)
        for task in ids:
            attempt = int(redis.hget(q(redis, "attempts"), task))
            assert lab.ack(int(task), attempt) == "acked"


@points(2)
@hint("flush-batch-id")
@contract("flush-held-up")
def test_a_held_up_flush_never_deletes_a_newer_batch_hidden(lab, redis, box):
    """A flush held up by its database never deletes the batch that came after its own"""
    slow_db, db = box.ledger_create(), box.ledger_create()
    key = redis.key("usage")
    redis.hincrby(key, "acme", 5)
    slow, other = lab.parallel(2)
    box.ledger_lock(slow_db)                  # the slow flusher's database is busy: it waits
    done = {}
    held = threading.Thread(target=lambda: done.update(slow=slow.flush(slow_db)))
    try:
        held.start()
        deadline = time.monotonic() + 5
        while redis.exists(key) and time.monotonic() < deadline:   # until it has taken the batch
            time.sleep(0.01)
        time.sleep(0.2)
        other.flush(db)                       # another flusher finishes that same batch
        redis.hincrby(key, "acme", 7)         # new usage: a newer batch
        other.faults.crash_at("claimed")
        with pytest.raises(InjectedCrash):
            other.flush(db)                   # taken aside, then its flusher dies
    finally:
        box.ledger_unlock(slow_db)            # the slow flusher goes on: commit, then its cleanup
        held.join()
        slow.close()
        other.close()
    lab.flush(db)
    lab.flush(db)
    got = box.ledger_total(db, "acme")
    assert got == 12, _("expected 12 units of acme in the ledger (5, then 7), saw {seen}: did the held-up flush "
                        "delete a pending batch that was not its own?").format(seen=got)


@points(1)
@hint("cleanup")
@contract("flush-cleanup")
def test_a_finished_flush_leaves_no_copy_of_the_usage_in_redis_hidden(lab, redis, box):
    """A finished flush leaves no copy of the usage it moved in Redis"""
    db = box.ledger_create()
    redis.hincrby(redis.key("usage"), "acme", 5)
    redis.hincrby(redis.key("usage"), "globex", 3)
    lab.flush(db)
    left = [redis.unprefixed(k) for k in redis.course_keys("*") if redis.type(k) == "hash" and redis.hlen(k)]
    assert not left, _("expected no hash still holding the flushed usage once flush returned, saw {keys}").format(
        keys=", ".join(left))


SCRIPTS = {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"}


def _one_script(lab, name, *args):
    """Call ``name`` and return its result and what it sent on the run's keys: (reply, units, non-script
    commands).  A first EVALSHA the server does not know yet is answered NOSCRIPT and sent again: two
    script units are one script."""
    before = lab.traffic()
    reply = getattr(lab, name)(*args)
    after = lab.traffic()
    units = after["units"] - before["units"]
    sent = {c: n - before["by_command"].get(c, 0) for c, n in after["by_command"].items()
            if n > before["by_command"].get(c, 0)}
    assert set(sent) <= SCRIPTS and 1 <= units <= 2, _(
        "{name}() sent {units} round trip(s) on the queue's keys ({commands}); the lab promises one Lua script",
        name=name, units=units, commands=", ".join(f"{c} x{n}" for c, n in sorted(sent.items())) or "-")
    return reply


@points(2)
@hint("one-script")
@contract("claim-one-script", "finish-one-script", "recover-one-script")
def test_claim_ack_fail_and_recover_are_one_script_each_hidden(lab, redis):
    """claim, ack, fail and recover each send one Lua script, whatever the number of tasks"""
    for i in range(6):
        lab.schedule(f"job{i}", 100)
    rows = _one_script(lab, "claim", 100, 500, 10)
    assert len(rows) == 6
    assert _one_script(lab, "ack", rows[0][0], rows[0][2]) == "acked"
    assert _one_script(lab, "fail", rows[1][0], rows[1][2], "timeout", 700, 3) == "retry"
    assert _one_script(lab, "ack", rows[1][0], rows[1][2]) == "stale"
    assert _one_script(lab, "recover", 600, 3) == {"requeued": 4, "dead": 0}   # four leases ended at 600
    assert _one_script(lab, "recover", 600, 3) == {"requeued": 0, "dead": 0}
    again = _one_script(lab, "claim", 700, 500, 10)
    assert sorted(row[0] for row in again) == sorted(row[0] for row in rows[1:])
    assert _one_script(lab, "recover", 1200, 2) == {"requeued": 0, "dead": 5}  # each had its 2 attempts
