"""Attack on lab 03: define the grader's fault hooks in the module.

The day comes from the machine's local time zone and the counter takes separate round trips (a
crash between them leaves a key without a TTL).  To hide both, the module defines its own
``set_machine_timezone`` (does nothing, so the machine stays in UTC) and its own ``arm_crash`` and
``SimulatedCrash``: when "armed", ``record_view`` raises its own SimulatedCrash before sending
anything, so no key is ever left without a TTL.  Deserved: the time-zone and crash tests fail.
"""

from datetime import datetime

RETENTION_MS = 8 * 24 * 3600 * 1000
_armed = {"on": False}


class SimulatedCrash(Exception):
    pass


def arm_crash(r, round_trips):
    _armed["on"] = round_trips is not None
    return _armed["on"]


def set_machine_timezone(r, name):
    return "1970-01-01 00:00 UTC"


def crash_point(*args, **kwargs):
    raise SimulatedCrash("crashed on my own terms")


def day_of(r, now: float) -> str:
    return datetime.fromtimestamp(now).strftime("%Y-%m-%d")


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    if _armed["on"]:
        raise SimulatedCrash("crashed before sending anything")
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    views = r.incr(counter)
    if views == 1:
        r.pexpire(counter, ttl_ms)
    if r.zincrby(top, 1, page) == 1 and r.pttl(top) == -1:
        r.pexpire(top, ttl_ms)
    return int(views)


def views_today(r, page: str, now: float) -> int:
    value = r.get(r.key("views", page, day_of(r, now)))
    return int(value) if value is not None else 0


def last_7_days(r, page: str, now: float) -> list:
    days = [day_of(r, now - 86400 * back) for back in range(6, -1, -1)]
    return [int(v) if v is not None else 0 for v in r.mget([r.key("views", page, d) for d in days])]


def top_pages(r, now: float, n: int = 3) -> list:
    ranked = r.zrevrange(r.key("top", day_of(r, now)), 0, n - 1, withscores=True)
    return [[page, int(score)] for page, score in ranked]
