"""Wrong: record_view updates the counter (INCR + PEXPIRE NX) in one MULTI/EXEC and the ranking (ZINCRBY + PEXPIRE NX) in a second one.

Caught by: test_a_crash_between_commands_leaves_no_key_without_ttl_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    counter = r.pipeline(transaction=True)
    counter.incr(views_key)
    counter.pexpire(views_key, ttl_ms, nx=True)
    count, _ = counter.execute()
    ranking = r.pipeline(transaction=True)
    ranking.zincrby(top_key, 1, page)
    ranking.pexpire(top_key, ttl_ms, nx=True)
    ranking.execute()
    return int(count)
