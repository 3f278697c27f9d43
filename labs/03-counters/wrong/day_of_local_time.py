"""Wrong: day_of formats datetime.fromtimestamp(now) without a time zone, i.e. the machine's local date.

Caught by: test_day_boundary_is_utc_whatever_the_machine_zone_hidden
"""

from datetime import datetime, timezone


def day_of(r, now: float) -> str:
    return datetime.fromtimestamp(now).strftime("%Y-%m-%d")
