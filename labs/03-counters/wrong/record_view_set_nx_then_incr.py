"""Wrong: record_view first creates both keys with their TTL (SET views 0 PX ttl NX, ZADD NX + PEXPIRE NX) in one call, then increments in a separate call.

Caught by: test_a_crash_between_commands_leaves_no_key_without_ttl_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    create = r.pipeline(transaction=True)
    create.set(views_key, 0, px=ttl_ms, nx=True)
    create.zadd(top_key, {page: 0}, nx=True)
    create.pexpire(top_key, ttl_ms, nx=True)
    create.execute()
    bump = r.pipeline(transaction=True)
    bump.incr(views_key)
    bump.zincrby(top_key, 1, page)
    count, _ = bump.execute()
    return int(count)
