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


# Another buyer's purchase, whole and atomic: what the grader does in the middle of the student's call.
BUY = """
local capacity = tonumber(redis.call('GET', KEYS[1]) or '0')
local sold = tonumber(redis.call('GET', KEYS[2]) or '0')
if sold >= capacity then return false end
return redis.call('INCR', KEYS[2])
"""


def buy_between(lab, redis, capacity):
    """take_ticket("gig") while, right after its first command naming event:gig:sold (a GET or a WATCH),
    another buyer takes a seat (after the call, when nothing followed that command): (the student's
    answer, the other buyer's seat or None)."""
    cap, sold = redis.key("event", "gig", "capacity"), redis.key("event", "gig", "sold")
    redis.set(cap, capacity)
    other = []

    def other_buyer():
        other.append(redis.eval(BUY, 2, cap, sold))

    seen, between = lab.call_between("take_ticket", ("gig",), after_key=sold, between=other_buyer)
    if not between:  # one script: nothing came after the read, the other buyer comes after the call
        other_buyer()
    assert not isinstance(seen, Exception), _("expected no error, saw {seen}").format(seen=seen)
    return seen, (int(other[0]) if other and other[0] is not None else None)


@points(1)
@hint("oversell")
@contract("ticket-concurrent-no-oversell")
def test_a_sale_right_after_the_read_is_not_missed_hidden(lab, redis):
    """One seat left; another buyer takes it right after take_ticket reads sold: nobody gets it twice."""
    # The grader holds take_ticket's first command after the one that names event:gig:sold at the
    # proxy and sells the last seat meanwhile.  A GET of sold checked in Python, then INCR (or SET),
    # sells a seat that is gone.
    seen, other = buy_between(lab, redis, 1)
    sold = redis.get(redis.key("event", "gig", "sold"))
    seats = sorted(s for s in (seen, other) if s is not None)
    assert seats == [1] and sold == "1", _(
        "one seat; take_ticket(\"gig\") returned {seen} while another buyer got {other} in the middle of "
        "the call, and event:gig:sold holds {sold}: exactly one of them gets seat 1").format(
        seen=seen, other=other, sold=sold)


@points(1)
@hint("not-sold-out")
@contract("ticket-not-refused-under-contention")
def test_a_sale_right_after_the_read_does_not_turn_the_buyer_away_hidden(lab, redis):
    """Two seats; another buyer takes one right after take_ticket reads sold: the buyer gets the other."""
    # The same hold; a WATCH on sold is refused with WatchError then: retried, the buyer gets seat 2;
    # answered None, a buyer hears "sold out" with a seat left.
    seen, other = buy_between(lab, redis, 2)
    sold = redis.get(redis.key("event", "gig", "sold"))
    assert sorted(s for s in (seen, other) if s is not None) == [1, 2] and sold == "2", _(
        "two seats; take_ticket(\"gig\") returned {seen} while another buyer got {other} in the middle of "
        "the call, and event:gig:sold holds {sold}: the buyer gets the seat that is left").format(
        seen=seen, other=other, sold=sold)
