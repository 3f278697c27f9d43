"""Wrong: safe_incr converts the stored value to int for the overflow report's found field.

Caught by: test_safe_incr_reports_overflow_hidden
"""

import redis


def _check_int(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")


def safe_incr(r, name: str, amount: int = 1) -> dict:
    _check_int(amount)
    key = r.key(name)
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as exc:
        message = str(exc)
        if message.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        if "overflow" in message:
            return {"ok": False, "error": "overflow", "found": int(r.get(key))}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
