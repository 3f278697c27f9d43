"""Wrong: counts with a read-modify-write (GET, add one in Python, SET ... KEEPTTL). Two views at
the same moment read the same value and write the same result: one view is lost. The ranking is
written from the same stale number.
"""

from datetime import datetime, timezone


def day_of(r, now: float) -> str:
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d")


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    views = int(r.get(counter) or 0) + 1
    with r.pipeline(transaction=True) as p:
        if views == 1:
            p.set(counter, views, px=ttl_ms)
        else:
            p.set(counter, views, keepttl=True)
        p.zadd(top, {page: views})
        p.pexpire(top, ttl_ms, nx=True)
        p.execute()
    return views


def last_7_days(r, page: str, now: float) -> list:
    days = [day_of(r, now - 86400 * back) for back in range(6, -1, -1)]
    return [int(v) if v is not None else 0 for v in r.mget([r.key("views", page, d) for d in days])]
