"""Wrong: INCR, then PEXPIRE when INCR returned 1, as separate round trips. Correct while nothing
fails, but a crash after INCR and before PEXPIRE leaves a key without a TTL that no later view repairs.
"""

from datetime import datetime, timezone


def day_of(r, now: float) -> str:
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d")


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    views = r.incr(counter)
    if views == 1:
        r.pexpire(counter, ttl_ms)
    if r.zincrby(top, 1, page) == 1 and r.pttl(top) == -1:
        r.pexpire(top, ttl_ms)
    return int(views)


def last_7_days(r, page: str, now: float) -> list:
    days = [day_of(r, now - 86400 * back) for back in range(6, -1, -1)]
    return [int(v) if v is not None else 0 for v in r.mget([r.key("views", page, d) for d in days])]
