"""Wrong: rate limiter 2 from the documentation, without the Lua fix.

fixed_window keeps one counter per client and limit: INCRBY cost, then PEXPIRE only when the counter
was new, in separate round trips.  The window opens with the first request and lasts window_ms of the
*server's real time*, whatever now_ms says; a crash between INCRBY and PEXPIRE would leave the key
without a TTL; and a denied request has already been counted.

Caught by: test_fixed_window_allows_the_limit_then_denies
"""


def fixed_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    allowed, remaining, retry = True, None, 0
    for i, (limit, window_ms) in enumerate(limits):
        key = r.key("rl", "fixed", client_id, i)
        current = r.incrby(key, cost)
        if current == cost:
            r.pexpire(key, window_ms)
        left = max(0, limit - current)
        remaining = left if remaining is None else min(remaining, left)
        if current > limit:
            allowed, retry = False, max(retry, r.pttl(key), 1)
    return {"allowed": allowed, "remaining": remaining, "retry_after_ms": retry}
