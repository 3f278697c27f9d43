"""Public tests of lab 01: run them with `python3 run.py check 01`."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import StudentError, contract, hint, points, student_raises


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


def views_key(redis, post_id):
    return redis.key("views", "post", post_id)


@points(2)
@hint("first-view")
@contract("count-view-returns-new-count", "count-view-key")
def test_first_view_is_one(lab, redis):
    """The first view of a post counts 1, the next 2, and Redis holds the count."""
    for expected in (1, 2):
        seen = lab.count_view(17)
        assert seen == expected, returns("count_view(17)", expected, seen)
    seen = redis.get(views_key(redis, 17))
    assert seen == "2", holds("views:post:17", "2", seen)


@points(1)
@hint("view-count")
@contract("view-count-reads", "view-count-creates-nothing")
def test_view_count_reads_without_creating(lab, redis):
    """view_count reads 0 for a post never viewed without creating its key."""
    seen = lab.view_count(404)
    assert seen == 0, returns("view_count(404)", 0, seen)
    assert redis.exists(views_key(redis, 404)) == 0, _("expected view_count to create no key, saw it create one")
    redis.set(views_key(redis, 405), 12)
    seen = lab.view_count(405)
    assert seen == 12, returns("view_count(405)", 12, seen)


@points(2)
@hint("add-up")
@contract("count-view-concurrent")
def test_views_from_many_processes_add_up(lab, redis):
    """Sixty views from four processes at once are all counted."""
    results = lab.run_concurrently([("count_view", (5,))] * 60, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    seen = redis.get(views_key(redis, 5))
    assert seen == "60", _("expected 60 views counted, saw {seen}: some views were lost").format(seen=seen)
    assert sorted(results) == list(range(1, 61)), _(
        "expected each count from 1 to 60 returned once, saw {seen}").format(seen=sorted(results)[:10])


@points(1)
@hint("take-views")
@contract("take-views-returns-and-resets")
def test_take_views_returns_count_and_restarts(lab, redis):
    """take_views returns the views so far and the counter starts again."""
    redis.set(views_key(redis, 8), 3)
    seen = lab.take_views(8)
    assert seen == 3, returns("take_views(8)", 3, seen)
    seen = redis.get(views_key(redis, 8))
    assert seen in (None, "0"), holds("views:post:8", _("nothing or 0"), seen)
    seen = lab.take_views(8)
    assert seen == 0, returns("take_views(8)", 0, seen)
    seen = lab.count_view(8)
    assert seen == 1, returns("count_view(8)", 1, seen)


@points(1)
@hint("next-id")
@contract("next-id-sequence", "next-id-per-kind")
def test_next_id_counts_per_kind(lab, redis):
    """next_id counts 1, 2, 3 for each kind separately."""
    seen = [lab.next_id("order") for _i in range(3)]
    assert seen == [1, 2, 3], returns("next_id(\"order\")", "1, 2, 3", seen)
    seen = lab.next_id("user")
    assert seen == 1, returns("next_id(\"user\")", 1, seen)
    seen = redis.get(redis.key("ids", "order"))
    assert seen == "3", holds("ids:order", "3", seen)


@points(1)
@hint("safe-incr-ok")
@contract("safe-incr-ok", "safe-incr-default-amount")
def test_safe_incr_counts(lab, redis):
    """safe_incr adds and reports the new value."""
    for args, expected in [((), {"ok": True, "value": 1}), ((41,), {"ok": True, "value": 42})]:
        seen = lab.safe_incr("clicks", *args)
        assert seen == expected, returns("safe_incr", expected, seen)
    seen = redis.get(redis.key("clicks"))
    assert seen == "42", holds("clicks", "42", seen)


@points(2)
@hint("safe-incr-not-integer")
@contract("safe-incr-not-integer", "safe-incr-leaves-refused-key")
def test_safe_incr_reports_a_non_integer(lab, redis):
    """safe_incr reports a value that is not an integer and leaves it alone."""
    redis.set(redis.key("clicks"), "abc")
    try:
        report = lab.safe_incr("clicks")
    except StudentError as e:
        raise AssertionError(_("expected a report, saw safe_incr raise {seen}").format(
            seen=f"{e.type}: {e.message}")) from None
    expected = {"ok": False, "error": "not_integer", "found": "abc"}
    assert report == expected, returns("safe_incr", expected, report)
    seen = redis.get(redis.key("clicks"))
    assert seen == "abc", holds("clicks", "abc", seen)


@points(1)
@hint("cents")
@contract("deposit-returns-balance")
def test_deposit_keeps_integer_cents(lab, redis):
    """deposit keeps the balance as an integer number of cents."""
    for cents, expected in [(1999, 1999), (1, 2000)]:
        seen = lab.deposit(1, cents)
        assert seen == expected, returns("deposit", expected, seen)
    seen = redis.get(redis.key("balance", 1))
    assert seen == "2000", holds("balance:1", "2000", seen)


@points(1)
@hint("cents-float")
@contract("deposit-amount-type", "deposit-writes-nothing-when-refused")
def test_deposit_refuses_a_float(lab, redis):
    """deposit refuses 19.99 with TypeError and writes nothing."""
    with student_raises("TypeError"):
        lab.deposit(2, 19.99)
    assert redis.exists(redis.key("balance", 2)) == 0, _("expected a refused deposit to write nothing, saw it write")


@points(1)
@hint("overdraft")
@contract("withdraw-returns-balance", "withdraw-insufficient", "withdraw-writes-nothing-when-refused")
def test_withdraw_refuses_an_overdraft(lab, redis):
    """withdraw refuses more than the balance and leaves it as it was."""
    redis.set(redis.key("balance", 3), 500)
    seen = lab.withdraw(3, 200)
    assert seen == 300, returns("withdraw(3, 200)", 300, seen)
    with student_raises("ValueError"):
        lab.withdraw(3, 301)
    seen = redis.get(redis.key("balance", 3))
    assert seen == "300", holds("balance:3", "300", seen)
