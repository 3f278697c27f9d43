"""record_view sets the expiry with PEXPIREAT from the machine's clock, which is wrong when that clock is."""
import time


def record_view(r, page, now, ttl_ms=RETENTION_MS):
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    expires_at = int(time.time() * 1000) + ttl_ms
    with r.pipeline(transaction=True) as p:
        p.incr(counter)
        p.pexpireat(counter, expires_at, nx=True)
        p.zincrby(top, 1, page)
        p.pexpireat(top, expires_at, nx=True)
        views = p.execute()[0]
    return int(views)
