"""Wrong: the client waits at most the budget for each reply but keeps redis-py's default retries, so a paused server costs the budget many times over.

Caught by: test_while_redis_answers_the_limiter_decides, test_a_paused_server_costs_the_budget_and_the_policy_answers
"""
import redis as redis_py


def guarded(r, call, budget_ms, policy, cooldown_ms=0):
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    fast = redis_py.Redis(unix_socket_path=r.connection_pool.connection_kwargs["path"], decode_responses=True,
                          socket_timeout=budget_ms / 1000, socket_connect_timeout=budget_ms / 1000)
    fast.key = r.key
    try:
        answer = call(fast)
    except redis.exceptions.RedisError as exc:
        if not no_answer(exc):
            raise
        return {"admitted": policy == "open", "by": policy}
    finally:
        fast.close()
    return {"admitted": bool(answer), "by": "redis"}
