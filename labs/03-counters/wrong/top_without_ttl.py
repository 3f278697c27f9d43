"""Wrong: the counter gets its TTL, the daily ranking (top:<day>) never does: one sorted set
per day stays in memory for ever.
"""

from datetime import datetime, timezone


def day_of(r, now: float) -> str:
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d")


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    with r.pipeline(transaction=True) as p:
        p.incr(counter)
        p.pexpire(counter, ttl_ms, nx=True)
        p.zincrby(top, 1, page)
        return int(p.execute()[0])


def last_7_days(r, page: str, now: float) -> list:
    days = [day_of(r, now - 86400 * back) for back in range(6, -1, -1)]
    return [int(v) if v is not None else 0 for v in r.mget([r.key("views", page, d) for d in days])]
