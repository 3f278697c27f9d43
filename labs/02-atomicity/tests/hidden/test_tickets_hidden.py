"""Hidden tests of lab 02, tickets: only the grader runs these."""
from redis_course.labs.testing import hint, points


@points(1)
@hint("no-capacity")
def test_event_without_capacity_sells_nothing_hidden(lab, redis):
    assert lab.take_ticket("unknown") is None
    redis.set(redis.key("event", "empty", "capacity"), 0)
    assert lab.take_ticket("empty") is None
    for event in ("unknown", "empty"):
        assert int(redis.get(redis.key("event", event, "sold")) or 0) == 0

