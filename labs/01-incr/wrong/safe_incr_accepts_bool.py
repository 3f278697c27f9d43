"""Wrong: safe_incr checks the amount with isinstance(amount, int) only, so True slips through as 1.

Caught by: test_safe_incr_refuses_an_amount_that_is_not_an_int_hidden
"""

import redis


def safe_incr(r, name: str, amount: int = 1) -> dict:
    if not isinstance(amount, int):
        raise TypeError(f"expected an int, got {type(amount).__name__}")
    key = r.key(name)
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as exc:
        message = str(exc)
        if message.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        if "overflow" in message:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
