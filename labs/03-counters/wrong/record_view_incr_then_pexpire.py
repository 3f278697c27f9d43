"""Wrong: record_view INCRs and ZINCRBYs in one transaction, then sends the PEXPIREs as separate calls when the count was 1.

Caught by: test_a_crash_between_commands_leaves_no_key_without_ttl_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    pipe = r.pipeline(transaction=True)
    pipe.incr(views_key)
    pipe.zincrby(top_key, 1, page)
    count, _ = pipe.execute()
    if count == 1:
        r.pexpire(views_key, ttl_ms, nx=True)
        r.pexpire(top_key, ttl_ms, nx=True)
    return int(count)
