"""Wrong: last_7_days returns MGET's replies as they come, strings like '2' for the days that have a key.

Caught by: test_last_7_days_oldest_first
"""


DAY_SECONDS = 24 * 3600


def last_7_days(r, page: str, now: float) -> list:
    keys = [r.key("views", page, day_of(r, now - back * DAY_SECONDS)) for back in range(6, -1, -1)]
    return [v if v is not None else 0 for v in r.mget(keys)]
