"""Wrong: the breaker lets one probe through and waits for its result, but a probe that raises a bug never reports one, so the breaker stays open for ever.

Caught by: test_a_probe_that_raises_does_not_leave_the_breaker_open
"""


def guarded(r, call, budget_ms, policy, cooldown_ms=0):
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if int(budget_ms) < 1 or int(cooldown_ms) < 0:
        raise ValueError("budget_ms must be at least 1 and cooldown_ms at least 0")
    breaker = _BREAKER.setdefault(id(r), {"open_until": 0.0, "probing": False})
    if breaker["open_until"]:
        if time.monotonic() < breaker["open_until"] or breaker["probing"]:
            return {"admitted": policy == "open", "by": policy}
        breaker["probing"] = True                      # one probe at a time
    kept = _FAST.get(id(r))
    if kept is None or kept[0] is not r:
        kept = _FAST[id(r)] = (r, budget_client(r, MAX_WAIT_MS))
    try:
        with deadline(int(budget_ms)):
            answer = call(kept[1])
    except redis.exceptions.RedisError as exc:
        if not no_answer(exc):
            raise
        breaker["probing"] = False
        if int(cooldown_ms):
            breaker["open_until"] = time.monotonic() + int(cooldown_ms) / 1000
        return {"admitted": policy == "open", "by": policy}
    breaker["probing"], breaker["open_until"] = False, 0.0
    return {"admitted": bool(answer), "by": "redis"}
