"""Wrong: record_view sets the TTL with EXPIRE ttl_ms // 1000 NX, in whole seconds.

Caught by: test_the_ttl_is_exact_to_the_millisecond_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    pipe = r.pipeline(transaction=True)
    pipe.incr(views_key)
    pipe.expire(views_key, max(1, ttl_ms // 1000), nx=True)
    pipe.zincrby(top_key, 1, page)
    pipe.expire(top_key, max(1, ttl_ms // 1000), nx=True)
    count, _, _, _ = pipe.execute()
    return int(count)
