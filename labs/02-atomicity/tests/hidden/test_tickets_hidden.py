"""Hidden tests of lab 02, tickets: only the grader runs these."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


@points(1)
@hint("no-capacity")
@contract("ticket-no-capacity", "ticket-writes-nothing-when-sold-out")
def test_event_without_capacity_sells_nothing_hidden(lab, redis):
    """An event without seats sells nothing and counts nothing."""
    seen = lab.take_ticket("unknown")
    assert seen is None, returns('take_ticket("unknown")', None, seen)
    redis.set(redis.key("event", "empty", "capacity"), 0)
    seen = lab.take_ticket("empty")
    assert seen is None, returns('take_ticket("empty")', None, seen)
    for event in ("unknown", "empty"):
        seen = int(redis.get(redis.key("event", event, "sold")) or 0)
        assert seen == 0, holds(f"event:{event}:sold", _("nothing or 0"), seen)



@points(2)
@hint("not-sold-out")
@contract("ticket-not-refused-under-contention")
def test_no_buyer_is_turned_away_while_seats_are_left_hidden(lab, redis):
    """Sixteen processes buy at once from an event with a seat for everyone: none hears "sold out"."""
    redis.set(redis.key("event", "arena", "capacity"), 400)
    results = lab.run_concurrently([("take_ticket", ("arena",))] * 320, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    turned_away = results.count(None)
    assert turned_away == 0, _(
        "expected a seat for each of 320 buyers of 400 seats, saw {seen} told the event was sold out").format(
        seen=turned_away)
    assert sorted(results) == list(range(1, 321)), _("expected seats 1 to 320, each sold once, saw {seen}").format(
        seen=sorted(results)[:8])
