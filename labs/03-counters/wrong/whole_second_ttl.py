"""record_view gives the TTL in whole seconds (ttl_ms // 1000), so 1500 ms becomes 1 s and 700 ms 0 s."""


def record_view(r, page, now, ttl_ms=RETENTION_MS):
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    with r.pipeline(transaction=True) as p:
        p.incr(counter)
        p.expire(counter, ttl_ms // 1000, nx=True)
        p.zincrby(top, 1, page)
        p.expire(top, ttl_ms // 1000, nx=True)
        views = p.execute()[0]
    return int(views)
