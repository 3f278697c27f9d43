"""Wrong: record_view sends the four commands in r.pipeline(transaction=False), one round trip but not one unit.

Caught by: test_a_crash_between_commands_leaves_no_key_without_ttl_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    pipe = r.pipeline(transaction=False)
    pipe.incr(views_key)
    pipe.pexpire(views_key, ttl_ms, nx=True)
    pipe.zincrby(top_key, 1, page)
    pipe.pexpire(top_key, ttl_ms, nx=True)
    count, _, _, _ = pipe.execute()
    return int(count)
