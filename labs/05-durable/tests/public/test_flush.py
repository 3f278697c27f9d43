"""Public tests of lab 05, the flusher: run them with `python3 run.py check 05`."""
import pytest

from redis_course.l10n import _
from redis_course.labs.engine.testing import InjectedCrash, contract, hint, points
from redis_course.lessons.durable import STEPS


def use(redis, customer, units):
    redis.hincrby(redis.key("usage"), customer, units)


@points(2)
@hint("flush")
@contract("flush-moves", "flush-cleanup")
def test_flush_moves_every_customer_to_sql(lab, redis, box):
    """flush moves every customer's usage to the database"""
    db = box.ledger_create()
    use(redis, "acme", 5)
    use(redis, "globex", 2)
    assert lab.flush(db) == {"acme": 5, "globex": 2}
    assert (box.ledger_total(db, "acme"), box.ledger_total(db, "globex")) == (5, 2)
    assert lab.flush(db) == {}
    use(redis, "acme", 3)
    assert lab.flush(db) == {"acme": 3}
    assert (box.ledger_total(db, "acme"), box.ledger_total(db, "globex")) == (8, 2)
    left = {c: n for c, n in redis.hgetall(redis.key("usage")).items() if int(n)}
    assert not left, _("expected the live hash to hold no usage already in the database, saw {seen}").format(seen=left)


@points(1)
@hint("flush")
@contract("flush-moves")
def test_nothing_to_flush(lab, redis, box):
    """With nothing counted, flush does nothing"""
    db = box.ledger_create()
    assert lab.flush(db) == {}
    assert box.ledger_total(db, "acme") == 0


@pytest.mark.parametrize("step", STEPS)
@points(2)
@hint("crash")
@contract("flush-crash-steps", "flush-crash-recovery", "flush-batch-once")
def test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice(lab, redis, box, step):
    """A crash at any step of flush loses nothing and counts nothing twice"""
    db = box.ledger_create()
    use(redis, "acme", 10)
    use(redis, "initech", 4)
    lab.faults.crash_at(step)                # the grader's fault: the process dies at that step
    with pytest.raises(InjectedCrash):
        lab.flush(db)
    # it died after doing the step: the batch had left the live hash, and only a commit reached SQL
    assert int(redis.hget(redis.key("usage"), "acme") or 0) == 0, _(
        "expected the batch to have left the live hash before the crash at {step}, saw it still there").format(
        step=step)
    assert box.ledger_total(db, "acme") == (10 if step == "committed" else 0), _(
        "expected only a commit to reach the database before the crash at {step}").format(
        step=step)
    use(redis, "acme", 1)                    # traffic goes on after the crash
    use(redis, "globex", 6)
    lab.flush(db)
    lab.flush(db)
    got = {c: box.ledger_total(db, c) for c in ("acme", "initech", "globex")}
    assert got == {"acme": 11, "initech": 4, "globex": 6}, _(
        "expected {want} after a crash at {step} and two flushes, saw {seen}").format(
        want={"acme": 11, "initech": 4, "globex": 6}, step=step, seen=got)
    assert lab.flush(db) == {}
    assert box.ledger_total(db, "acme") == 11
