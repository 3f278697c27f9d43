"""Wrong: record_view returns the ZINCRBY score (a float such as 2.0) instead of the INCR reply.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    day = day_of(r, now)
    views_key = r.key("views", page, day)
    top_key = r.key("top", day)
    pipe = r.pipeline(transaction=True)
    pipe.incr(views_key)
    pipe.pexpire(views_key, ttl_ms, nx=True)
    pipe.zincrby(top_key, 1, page)
    pipe.pexpire(top_key, ttl_ms, nx=True)
    _, _, score, _ = pipe.execute()
    return score
