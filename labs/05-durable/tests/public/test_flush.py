"""Public tests of lab 05, the flusher: run them with `python3 run.py check 05`."""
import pytest

from redis_course.labs.testing import hint, points, student_raises
from redis_course.lessons.durable import STEPS, lab_ledger, ledger_total


@points(2)
@hint("flush")
def test_flush_moves_the_count_to_sql(lab, redis):
    db = lab_ledger(redis)
    redis.incrby(redis.key("counter", "clicks"), 5)
    assert lab.flush(db, "clicks") == 5
    assert ledger_total(db, "clicks") == 5
    assert lab.flush(db, "clicks") == 0
    redis.incrby(redis.key("counter", "clicks"), 3)
    assert lab.flush(db, "clicks") == 3
    assert ledger_total(db, "clicks") == 8
    assert int(redis.get(redis.key("counter", "clicks")) or 0) == 0


@points(1)
@hint("flush")
def test_nothing_to_flush(lab, redis):
    db = lab_ledger(redis)
    assert lab.flush(db, "never") == 0
    assert ledger_total(db, "never") == 0


@pytest.mark.parametrize("step", STEPS)
@points(2)
@hint("crash")
def test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice(lab, redis, step):
    db = lab_ledger(redis)
    key = redis.key("counter", "clicks")
    redis.incrby(key, 10)
    with student_raises("SimulatedCrash"):
        lab.flush(db, "clicks", step)
    redis.incrby(key, 1)                    # traffic goes on after the crash
    lab.flush(db, "clicks")
    lab.flush(db, "clicks")
    assert ledger_total(db, "clicks") == 11, f"after a crash at {step!r}"
    assert lab.flush(db, "clicks") == 0
    assert ledger_total(db, "clicks") == 11
