"""Wrong: safe_incr asks TYPE before INCRBY, so a key that changes type in between escapes its report.

Caught by: test_safe_incr_reports_wrong_type_hidden
"""

import redis


def safe_incr(r, name: str, amount: int = 1) -> dict:
    if type(amount) is not int:
        raise TypeError(f"amount must be an int, not {type(amount).__name__}")
    key = r.key(name)
    kind = r.type(key)
    if kind not in ("string", "none"):
        return {"ok": False, "error": "wrong_type", "found": kind}
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as e:
        if "overflow" in str(e):
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
