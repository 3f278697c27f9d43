"""Public tests of lab 03: run them with `python3 run.py check 03`."""
from datetime import datetime, timezone

from redis_course.labs.testing import hint, points


def ts(*args) -> float:
    """Unix seconds of a UTC date and time."""
    return datetime(*args, tzinfo=timezone.utc).timestamp()


NOON = ts(2024, 3, 5, 12, 0)


@points(1)
@hint("utc-day")
def test_day_of_is_the_utc_date(lab, redis):
    """day_of gives the UTC date, up to the last instant of the day."""
    assert lab.day_of(NOON) == "2024-03-05"
    assert lab.day_of(ts(2024, 3, 5, 23, 59, 59, 900_000)) == "2024-03-05"
    assert lab.day_of(ts(2024, 3, 6, 0, 0)) == "2024-03-06"


@points(2)
@hint("first-view")
def test_views_are_counted_per_page_and_day(lab, redis):
    """Views are counted per page and per UTC day, in the counter and the ranking."""
    assert lab.record_view("home", NOON) == 1
    assert lab.record_view("home", NOON + 60) == 2
    assert lab.record_view("about", NOON) == 1
    assert redis.get(redis.key("views", "home", "2024-03-05")) == "2"
    assert redis.zscore(redis.key("top", "2024-03-05"), "home") == 2
    assert lab.views_today("home", NOON + 120) == 2
    assert lab.views_today("pricing", NOON) == 0


@points(2)
@hint("ttl-always")
def test_every_key_has_a_ttl(lab, redis):
    """Both keys have a TTL, eight days by default."""
    for _ in range(3):
        lab.record_view("home", NOON)
    for key in (redis.key("views", "home", "2024-03-05"), redis.key("top", "2024-03-05")):
        assert redis.exists(key), f"{redis.unprefixed(key)} was not written"
        assert redis.pttl(key) > 0, f"{redis.unprefixed(key)} has no TTL"
    day_ms = 8 * 24 * 3600 * 1000
    assert redis.pttl(redis.key("views", "home", "2024-03-05")) > day_ms - 60_000, "the default TTL is 8 days"


@points(2)
@hint("week")
def test_last_7_days_oldest_first(lab, redis):
    """last_7_days gives the seven days up to today, oldest first, 0 for a day without views."""
    for day, views in [(27, 1), (29, 3), (4, 2), (5, 4)]:  # 27 Feb is too old; 2024 is a leap year
        month = 2 if day > 5 else 3
        for _ in range(views):
            lab.record_view("home", ts(2024, month, day, 10, 0))
    lab.record_view("home", ts(2024, 3, 6, 0, 0, 1))  # tomorrow: not in the week
    assert lab.last_7_days("home", NOON) == [0, 3, 0, 0, 0, 2, 4]  # 28 Feb .. 5 Mar


@points(1)
@hint("top")
def test_top_pages_most_viewed_first(lab, redis):
    """top_pages lists the most viewed pages of the day, most first."""
    for page, views in [("home", 3), ("about", 1), ("pricing", 5), ("blog", 2)]:
        for _ in range(views):
            lab.record_view(page, NOON)
    assert lab.top_pages(NOON, 3) == [["pricing", 5], ["home", 3], ["blog", 2]]
