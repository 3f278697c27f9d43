"""Public tests of lab 05, the flusher: run them with `python3 run.py check 05`."""
import pytest

from redis_course.labs.testing import InjectedCrash, hint, points
from redis_course.lessons.durable import STEPS, lab_ledger, ledger_total


def use(redis, customer, units):
    redis.hincrby(redis.key("usage"), customer, units)


@points(2)
@hint("flush")
def test_flush_moves_every_customer_to_sql(lab, redis):
    db = lab_ledger(redis)
    use(redis, "acme", 5)
    use(redis, "globex", 2)
    assert lab.flush(db) == {"acme": 5, "globex": 2}
    assert (ledger_total(db, "acme"), ledger_total(db, "globex")) == (5, 2)
    assert lab.flush(db) == {}
    use(redis, "acme", 3)
    assert lab.flush(db) == {"acme": 3}
    assert (ledger_total(db, "acme"), ledger_total(db, "globex")) == (8, 2)
    left = {c: n for c, n in redis.hgetall(redis.key("usage")).items() if int(n)}
    assert not left, f"usage already in the database is still in the live hash: {left}"


@points(1)
@hint("flush")
def test_nothing_to_flush(lab, redis):
    db = lab_ledger(redis)
    assert lab.flush(db) == {}
    assert ledger_total(db, "acme") == 0


@pytest.mark.parametrize("step", STEPS)
@points(2)
@hint("crash")
def test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice(lab, redis, step):
    db = lab_ledger(redis)
    use(redis, "acme", 10)
    use(redis, "initech", 4)
    lab.faults.crash_at(step)                # the grader's fault: the process dies at that step
    with pytest.raises(InjectedCrash):
        lab.flush(db)
    # it died after doing the step: the batch had left the live hash, and only a commit reached SQL
    assert int(redis.hget(redis.key("usage"), "acme") or 0) == 0, f"crashed at {step!r} before claiming"
    assert ledger_total(db, "acme") == (10 if step == "committed" else 0), f"after a crash at {step!r}"
    use(redis, "acme", 1)                    # traffic goes on after the crash
    use(redis, "globex", 6)
    lab.flush(db)
    lab.flush(db)
    got = {c: ledger_total(db, c) for c in ("acme", "initech", "globex")}
    assert got == {"acme": 11, "initech": 4, "globex": 6}, f"after a crash at {step!r}"
    assert lab.flush(db) == {}
    assert ledger_total(db, "acme") == 11
