"""Wrong: counts with a read-modify-write (GET, add one in Python, SET ... KEEPTTL). Two views at
the same moment read the same value and write the same result: one view is lost. The ranking is
written from the same stale number.

Caught by: test_a_view_recorded_between_two_requests_is_not_lost_hidden, test_concurrent_views_are_all_counted_hidden
"""


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
