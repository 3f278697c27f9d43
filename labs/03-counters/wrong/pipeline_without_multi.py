"""record_view sends its commands in a pipeline without MULTI, which Redis does not run as one unit."""


def record_view(r, page, now, ttl_ms=RETENTION_MS):
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    with r.pipeline(transaction=False) as p:
        p.incr(counter)
        p.pexpire(counter, ttl_ms, nx=True)
        p.zincrby(top, 1, page)
        p.pexpire(top, ttl_ms, nx=True)
        views = p.execute()[0]
    return int(views)
