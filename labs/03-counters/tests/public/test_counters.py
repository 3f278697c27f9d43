"""Public tests of lab 03: run them with `python3 run.py check 03`."""
from datetime import datetime, timezone

from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


def ts(*args) -> float:
    """Unix seconds of a UTC date and time."""
    return datetime(*args, tzinfo=timezone.utc).timestamp()


NOON = ts(2024, 3, 5, 12, 0)


@points(1)
@hint("utc-day")
@contract("day-of-utc")
def test_day_of_is_the_utc_date(lab, redis):
    """day_of gives the UTC date, up to the last instant of the day."""
    for when, expected in [(NOON, "2024-03-05"), (ts(2024, 3, 5, 23, 59, 59, 900_000), "2024-03-05"),
                           (ts(2024, 3, 6, 0, 0), "2024-03-06")]:
        seen = lab.day_of(when)
        assert seen == expected, returns(f"day_of({when})", expected, seen)


@points(2)
@hint("first-view")
@contract("record-view-returns-count", "record-view-keys")
def test_views_are_counted_per_page_and_day(lab, redis):
    """Views are counted per page and per UTC day, in the counter and the ranking."""
    for page, when, expected in [("home", NOON, 1), ("home", NOON + 60, 2), ("about", NOON, 1)]:
        seen = lab.record_view(page, when)
        assert seen == expected, returns(f'record_view("{page}", {when})', expected, seen)
    seen = redis.get(redis.key("views", "home", "2024-03-05"))
    assert seen == "2", holds("views:home:2024-03-05", 2, seen)
    seen = redis.zscore(redis.key("top", "2024-03-05"), "home")
    assert seen == 2, holds("top:2024-03-05 home", 2, seen)
    for page, expected in [("home", 2), ("pricing", 0)]:
        seen = lab.views_today(page, NOON + 120)
        assert seen == expected, returns(f'views_today("{page}")', expected, seen)


@points(2)
@hint("ttl-always")
@contract("ttl-on-creation")
def test_every_key_has_a_ttl(lab, redis):
    """Both keys have a TTL, eight days by default."""
    for _round in range(3):
        lab.record_view("home", NOON)
    for key in (redis.key("views", "home", "2024-03-05"), redis.key("top", "2024-03-05")):
        assert redis.exists(key), _("expected {key} to exist, saw it missing").format(key=redis.unprefixed(key))
        left = redis.pttl(key)
        assert left > 0, _("expected {key} to have a TTL, saw {seen}").format(key=redis.unprefixed(key), seen=left)
    day_ms = 8 * 24 * 3600 * 1000
    left = redis.pttl(redis.key("views", "home", "2024-03-05"))
    assert left > day_ms - 60_000, _("expected the default TTL of 8 days ({expected} ms), saw {seen} ms").format(
        expected=day_ms, seen=left)


@points(2)
@hint("week")
@contract("last-7-days")
def test_last_7_days_oldest_first(lab, redis):
    """last_7_days gives the seven days up to today, oldest first, 0 for a day without views."""
    for day, views in [(27, 1), (29, 3), (4, 2), (5, 4)]:  # 27 Feb is too old; 2024 is a leap year
        month = 2 if day > 5 else 3
        for _ in range(views):
            lab.record_view("home", ts(2024, month, day, 10, 0))
    lab.record_view("home", ts(2024, 3, 6, 0, 0, 1))  # tomorrow: not in the week
    seen = lab.last_7_days("home", NOON)
    assert seen == [0, 3, 0, 0, 0, 2, 4], returns("last_7_days", [0, 3, 0, 0, 0, 2, 4], seen)  # 28 Feb .. 5 Mar


@points(1)
@hint("top")
@contract("top-pages", "replies-are-ints")
def test_top_pages_most_viewed_first(lab, redis):
    """top_pages lists the most viewed pages of the day, most first."""
    for page, views in [("home", 3), ("about", 1), ("pricing", 5), ("blog", 2)]:
        for _ in range(views):
            lab.record_view(page, NOON)
    seen = lab.top_pages(NOON, 3)
    expected = [["pricing", 5], ["home", 3], ["blog", 2]]
    assert seen == expected, returns("top_pages", expected, seen)
