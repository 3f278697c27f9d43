"""Public tests of lab 02, tickets: run them with `python3 run.py check 02`."""
from redis_course.labs.testing import hint, points


@points(2)
@hint("seats")
def test_tickets_are_numbered_until_sold_out(lab, redis):
    """Seats are numbered 1, 2, 3, then the event is sold out."""
    redis.set(redis.key("event", "gig", "capacity"), 3)
    assert [lab.take_ticket("gig") for _ in range(5)] == [1, 2, 3, None, None]
    assert redis.get(redis.key("event", "gig", "sold")) == "3"


@points(3)
@hint("oversell")
def test_no_overselling_under_concurrency(lab, redis):
    """Sixteen processes buying at once never get more tickets than seats, nor one seat twice."""
    redis.set(redis.key("event", "warmup", "capacity"), 1)   # alone first: fails fast if wrong anyway
    assert [lab.take_ticket("warmup"), lab.take_ticket("warmup")] == [1, None]
    events = [f"show{i}" for i in range(5)]
    for event in events:
        redis.set(redis.key("event", event, "capacity"), 40)
    calls = [("take_ticket", (events[j % len(events)],)) for j in range(400)]   # 80 buyers per show
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"take_ticket raised: {errors[0]}"
    for event in events:
        got = [res for (_, (ev,)), res in zip(calls, results) if ev == event]
        seats = sorted(res for res in got if res is not None)
        assert len(seats) <= 40, f"{event}: {len(seats)} tickets sold for 40 seats"
        assert len(set(seats)) == len(seats), f"{event}: two buyers got the same seat"
        assert seats == list(range(1, 41)), f"{event}: seats sold {seats[:5]}..., expected 1..40"
        assert redis.get(redis.key("event", event, "sold")) == "40"
