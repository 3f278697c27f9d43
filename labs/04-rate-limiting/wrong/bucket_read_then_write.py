"""The token bucket reads the hash in one round trip, decides in Python and writes it in another.

Caught by: test_token_bucket_under_sixteen_processes_hidden
"""


def token_bucket(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    import math

    pairs = [(int(limit), int(window_ms)) for limit, window_ms in limits]
    if not pairs or any(limit < 1 or window_ms < 1 for limit, window_ms in pairs):
        raise ValueError("limits must be a non-empty list of [limit, window_ms] pairs, all at least 1")
    if not 1 <= int(cost) <= min(limit for limit, _ in pairs):
        raise ValueError("cost must be at least 1 and at most the smallest limit")
    key = r.key("rl", "bucket", client_id)
    if now_ms is None:
        sec, usec = r.time()
        now, slack = sec * 1000 + usec // 1000, 0
    else:
        now, slack = int(now_ms), 60_000
    got = r.hmget(key, ["at"] + [f"lvl{i + 1}" for i in range(len(pairs))])
    last = int(got[0]) if got[0] is not None else now
    since = max(0, now - last)
    level, fits, wait = [], None, 0
    for i, (cap, span) in enumerate(pairs):
        stored = int(got[i + 1]) if got[i + 1] is not None else cap * span
        level.append(min(cap * span, stored + since * cap))
        whole = level[i] // span
        fits = whole if fits is None else min(fits, whole)
        short = cost * span - level[i]
        if short > 0:
            wait = max(wait, math.ceil(short / cap))
    if wait > 0:
        return {"allowed": False, "remaining": fits, "retry_after_ms": wait}
    new, refilled = {"at": max(now, last)}, 0
    for i, (cap, span) in enumerate(pairs):
        left = level[i] - cost * span
        new[f"lvl{i + 1}"] = left
        refilled = max(refilled, math.ceil((cap * span - left) / cap))
    with r.pipeline() as tx:                  # the write is one transaction, but the read was before
        tx.hset(key, mapping=new)
        tx.pexpire(key, refilled + slack)
        tx.execute()
    return {"allowed": True, "remaining": fits - cost, "retry_after_ms": 0}
