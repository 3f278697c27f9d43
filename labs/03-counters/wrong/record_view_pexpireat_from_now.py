"""Wrong: record_view sets the expiry with PEXPIREAT now*1000 + ttl_ms NX, counting the TTL from the caller's `now` instead of Redis's clock.

Caught by: test_views_are_counted_per_page_and_day
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    expires_at_ms = int(now * 1000) + ttl_ms
    pipe = r.pipeline(transaction=True)
    pipe.incr(views_key)
    pipe.pexpireat(views_key, expires_at_ms, nx=True)
    pipe.zincrby(top_key, 1, page)
    pipe.pexpireat(top_key, expires_at_ms, nx=True)
    count, _, _, _ = pipe.execute()
    return int(count)
