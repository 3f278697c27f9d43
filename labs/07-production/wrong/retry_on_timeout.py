"""Wrong: the client has the budget as its socket timeout but keeps redis-py's default retries, so a paused server costs the budget several times over."""
import redis as redis_py


def guarded(r, call, budget_ms, policy):
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    kwargs = dict(r.connection_pool.connection_kwargs)
    kwargs.update(socket_timeout=budget_ms / 1000, socket_connect_timeout=budget_ms / 1000)
    kwargs.pop("retry", None)
    pool = redis_py.ConnectionPool(connection_class=r.connection_pool.connection_class, **kwargs)
    fast = type(r)(connection_pool=pool)
    fast.backend, fast.prefix, fast.owned, fast.where = r.backend, r.prefix, r.owned, r.where
    try:
        answer = call(fast)
    except NO_ANSWER:
        return {"admitted": policy == "open", "by": policy}
    finally:
        pool.disconnect()
    return {"admitted": bool(answer), "by": "redis"}
