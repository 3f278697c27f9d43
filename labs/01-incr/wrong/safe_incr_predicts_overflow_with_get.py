"""Wrong: safe_incr GETs the value and predicts an overflow in Python, so it only expects INCRBY to refuse non-integers and wrong types.

Caught by: test_safe_incr_strict_integers_hidden
"""

import redis


def _check_int(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")


def safe_incr(r, name: str, amount: int = 1) -> dict:
    _check_int(amount)
    key = r.key(name)
    try:
        current = r.get(key)
    except redis.exceptions.ResponseError:
        return {"ok": False, "error": "wrong_type", "found": r.type(key)}
    if current is not None:
        try:
            predicted = int(current)
        except ValueError:
            predicted = None
        if predicted is not None and str(predicted) == current and not (-2**63 <= predicted + amount <= MAX_INT64):
            return {"ok": False, "error": "overflow", "found": current}
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as exc:
        if str(exc).startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
