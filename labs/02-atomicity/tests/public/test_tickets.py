"""Public tests of lab 02, tickets: run them with `python3 run.py check 02`."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


@points(2)
@hint("seats")
@contract("ticket-seat-numbers", "ticket-sold-out", "ticket-sold-equals-seat")
def test_tickets_are_numbered_until_sold_out(lab, redis):
    """Seats are numbered 1, 2, 3, then the event is sold out."""
    redis.set(redis.key("event", "gig", "capacity"), 3)
    seen = [lab.take_ticket("gig") for _i in range(5)]
    assert seen == [1, 2, 3, None, None], returns('take_ticket("gig")', "1, 2, 3, None, None", seen)
    seen = redis.get(redis.key("event", "gig", "sold"))
    assert seen == "3", holds("event:gig:sold", 3, seen)


@points(3)
@hint("oversell")
@contract("ticket-concurrent-no-oversell", "ticket-sold-equals-seat")
def test_no_overselling_under_concurrency(lab, redis):
    """Sixteen processes buying at once never get more tickets than seats, nor one seat twice."""
    redis.set(redis.key("event", "warmup", "capacity"), 1)   # alone first: fails fast if wrong anyway
    seen = [lab.take_ticket("warmup"), lab.take_ticket("warmup")]
    assert seen == [1, None], returns('take_ticket("warmup")', "1, None", seen)
    events = [f"show{i}" for i in range(5)]
    for event in events:
        redis.set(redis.key("event", event, "capacity"), 40)
    calls = [("take_ticket", (events[j % len(events)],)) for j in range(400)]   # 80 buyers per show
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    for event in events:
        got = [res for (_, (ev,)), res in zip(calls, results) if ev == event]
        seats = sorted(res for res in got if res is not None)
        assert len(seats) <= 40, _("expected at most 40 tickets for {event}, saw {seen}").format(
            event=event, seen=len(seats))
        assert seats == list(range(1, 41)), _("expected seats 1 to 40 for {event}, each sold once, saw {seen}").format(
            event=event, seen=seats[:8])
        seen = redis.get(redis.key("event", event, "sold"))
        assert seen == "40", holds(f"event:{event}:sold", 40, seen)
