"""Wrong: views_today reads the counter with INCRBY key 0 to always get an int, which creates a key without TTL.

Caught by: test_reading_creates_nothing_hidden
"""


def views_today(r, page: str, now: float) -> int:
    return r.incrby(r.key("views", page, day_of(r, now)), 0)
