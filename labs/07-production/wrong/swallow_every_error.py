"""Wrong: guarded answers by its policy for any exception, so fail-open also admits every request that a bug or a WRONGTYPE error breaks."""


def guarded(r, call, budget_ms, policy):
    fast = budget_client(r, max(1, int(budget_ms)))
    try:
        answer = call(fast)
    except Exception:
        return {"admitted": policy == "open", "by": policy}
    finally:
        fast.connection_pool.disconnect()
    return {"admitted": bool(answer), "by": "redis"}
