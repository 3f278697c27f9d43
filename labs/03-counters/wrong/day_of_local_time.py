"""Wrong: day_of formats datetime.fromtimestamp(now) without a time zone, i.e. the machine's local date."""

from datetime import datetime, timezone


def day_of(r, now: float) -> str:
    return datetime.fromtimestamp(now).strftime("%Y-%m-%d")
