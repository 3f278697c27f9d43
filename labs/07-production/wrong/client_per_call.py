"""Wrong: guarded makes a new budget client for every call and closes it after, so each request pays a connect and a handshake, each wait under the budget but together over it.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


def guarded(r, call, budget_ms, policy, cooldown_ms=0):
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if int(budget_ms) < 1 or int(cooldown_ms) < 0:
        raise ValueError("budget_ms must be at least 1 and cooldown_ms at least 0")
    breaker = _BREAKER.setdefault(id(r), {"open_until": 0.0})
    if time.monotonic() < breaker["open_until"]:
        return {"admitted": policy == "open", "by": policy}
    fast = budget_client(r, int(budget_ms))
    try:
        answer = call(fast)
    except redis.exceptions.RedisError as exc:
        if not no_answer(exc):
            raise
        if int(cooldown_ms):
            breaker["open_until"] = time.monotonic() + int(cooldown_ms) / 1000
        return {"admitted": policy == "open", "by": policy}
    finally:
        fast.connection_pool.disconnect()
    return {"admitted": bool(answer), "by": "redis"}
