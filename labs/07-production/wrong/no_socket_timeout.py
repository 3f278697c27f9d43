"""Wrong: guarded calls Redis on the ordinary client, whose socket timeout is far longer than the budget, so a paused server holds every request."""


def guarded(r, call, budget_ms, policy):
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if int(budget_ms) < 1:
        raise ValueError("budget_ms must be at least 1")
    try:
        answer = call(r)
    except NO_ANSWER:
        return {"admitted": policy == "open", "by": policy}
    return {"admitted": bool(answer), "by": "redis"}
