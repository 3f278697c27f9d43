"""Wrong: record_view sends PEXPIRE without NX with every view, so each view restarts the TTL.

Caught by: test_later_views_do_not_extend_the_ttl_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    pipe = r.pipeline(transaction=True)
    pipe.incr(views_key)
    pipe.pexpire(views_key, ttl_ms)
    pipe.zincrby(top_key, 1, page)
    pipe.pexpire(top_key, ttl_ms)
    count, _, _, _ = pipe.execute()
    return int(count)
