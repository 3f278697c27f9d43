"""Wrong: safe_incr classifies any message containing 'out of range' as overflow, which also matches 'value is not an integer or out of range'.

Caught by: test_safe_incr_reports_a_non_integer
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
        if "overflow" in message or "out of range" in message:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
