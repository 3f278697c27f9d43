"""Wrong: INCR, then PEXPIRE when INCR returned 1, as separate round trips. Correct while nothing
fails, but a crash after INCR and before PEXPIRE leaves a key without a TTL that no later view repairs.

Caught by: test_a_crash_between_commands_leaves_no_key_without_ttl_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    counter, top = r.key("views", page, day), r.key("top", day)
    views = r.incr(counter)
    if views == 1:
        r.pexpire(counter, ttl_ms)
    if r.zincrby(top, 1, page) == 1 and r.pttl(top) == -1:
        r.pexpire(top, ttl_ms)
    return int(views)
