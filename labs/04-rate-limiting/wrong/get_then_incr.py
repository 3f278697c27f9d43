"""Wrong: fixed_window reads the counts, decides in Python, then writes the new counts in another round trip.

The read (HMGET) and the write (HSET + PEXPIRE, in one MULTI) are two round trips: processes that
read the same counts all pass the check, and each writes its own count + cost, so more than the
limit get in.

Caught by: test_sixteen_processes_never_get_more_than_the_limit
"""


def fixed_window(r, client_id: str, limits: list, cost: int = 1, now_ms: int | None = None) -> dict:
    key = r.key("rl", "fixed", client_id)
    if now_ms is None:
        sec, usec = r.time()
        now, slack = sec * 1000 + usec // 1000, 0
    else:
        now, slack = int(now_ms), 60_000
    got = r.hmget(key, [field for i in range(1, len(limits) + 1) for field in (f"k{i}", f"used{i}")])
    new, fits, wait, keep = {}, None, 0, 0
    for i, (cap, span) in enumerate(limits, 1):
        k, till_next = now // span, span - now % span
        used = int(got[2 * i - 1]) if got[2 * i - 2] is not None and int(got[2 * i - 2]) == k else 0
        new[f"k{i}"], new[f"used{i}"] = k, used + cost
        room = max(0, cap - used)
        fits = room if fits is None else min(fits, room)
        if used + cost > cap:
            wait = max(wait, till_next)
        keep = max(keep, till_next)
    if wait > 0:
        return {"allowed": False, "remaining": fits, "retry_after_ms": wait}
    with r.pipeline() as tx:                  # the write is one transaction, but the read was before it
        tx.hset(key, mapping=new)
        tx.pexpire(key, keep + slack)
        tx.execute()
    return {"allowed": True, "remaining": fits - cost, "retry_after_ms": 0}
