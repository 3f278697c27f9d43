"""Public tests of lab 01: run them with `python3 run.py check 01`."""
from redis_course.labs.testing import StudentError, hint, points, student_raises


def views_key(redis, post_id):
    return redis.key("views", "post", post_id)


@points(2)
@hint("first-view")
def test_first_view_is_one(lab, redis):
    """The first view of a post counts 1, the next 2, and Redis holds the count."""
    assert lab.count_view(17) == 1
    assert lab.count_view(17) == 2
    assert redis.get(views_key(redis, 17)) == "2"


@points(1)
@hint("view-count")
def test_view_count_reads_without_creating(lab, redis):
    """view_count reads 0 for a post never viewed without creating its key."""
    assert lab.view_count(404) == 0
    assert redis.exists(views_key(redis, 404)) == 0, "view_count created the key"
    redis.set(views_key(redis, 405), 12)
    assert lab.view_count(405) == 12


@points(2)
@hint("add-up")
def test_views_from_many_processes_add_up(lab, redis):
    """Sixty views from four processes at once are all counted."""
    results = lab.run_concurrently([("count_view", (5,))] * 60, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"count_view raised: {errors[0]}"
    assert redis.get(views_key(redis, 5)) == "60", "some views were lost"
    assert sorted(results) == list(range(1, 61)), "two calls returned the same count"


@points(1)
@hint("take-views")
def test_take_views_returns_count_and_restarts(lab, redis):
    """take_views returns the views so far and the counter starts again."""
    redis.set(views_key(redis, 8), 3)
    assert lab.take_views(8) == 3
    assert redis.get(views_key(redis, 8)) in (None, "0")
    assert lab.take_views(8) == 0
    assert lab.count_view(8) == 1


@points(1)
@hint("next-id")
def test_next_id_counts_per_kind(lab, redis):
    """next_id counts 1, 2, 3 for each kind separately."""
    assert [lab.next_id("order") for _ in range(3)] == [1, 2, 3]
    assert lab.next_id("user") == 1
    assert redis.get(redis.key("ids", "order")) == "3"


@points(1)
@hint("safe-incr-ok")
def test_safe_incr_counts(lab, redis):
    """safe_incr adds and reports the new value."""
    assert lab.safe_incr("clicks") == {"ok": True, "value": 1}
    assert lab.safe_incr("clicks", 41) == {"ok": True, "value": 42}
    assert redis.get(redis.key("clicks")) == "42"


@points(2)
@hint("safe-incr-not-integer")
def test_safe_incr_reports_a_non_integer(lab, redis):
    """safe_incr reports a value that is not an integer and leaves it alone."""
    redis.set(redis.key("clicks"), "abc")
    try:
        report = lab.safe_incr("clicks")
    except StudentError as e:
        raise AssertionError(f"safe_incr crashed with {e.type}: {e.message}") from None
    assert report == {"ok": False, "error": "not_integer", "found": "abc"}
    assert redis.get(redis.key("clicks")) == "abc", "safe_incr changed the value it could not increment"


@points(1)
@hint("cents")
def test_deposit_keeps_integer_cents(lab, redis):
    """deposit keeps the balance as an integer number of cents."""
    assert lab.deposit(1, 1999) == 1999
    assert lab.deposit(1, 1) == 2000
    assert redis.get(redis.key("balance", 1)) == "2000"


@points(1)
@hint("cents-float")
def test_deposit_refuses_a_float(lab, redis):
    """deposit refuses 19.99 with TypeError and writes nothing."""
    with student_raises("TypeError"):
        lab.deposit(2, 19.99)
    assert redis.exists(redis.key("balance", 2)) == 0, "a refused deposit wrote to Redis"


@points(1)
@hint("overdraft")
def test_withdraw_refuses_an_overdraft(lab, redis):
    """withdraw refuses more than the balance and leaves it as it was."""
    redis.set(redis.key("balance", 3), 500)
    assert lab.withdraw(3, 200) == 300
    with student_raises("ValueError"):
        lab.withdraw(3, 301)
    assert redis.get(redis.key("balance", 3)) == "300", "a refused withdrawal changed the balance"
