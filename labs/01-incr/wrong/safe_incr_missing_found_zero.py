"""Wrong: safe_incr reports a missing key as found "0" (a missing counter counts as 0) instead of None.

Caught by: test_safe_incr_strict_integers_hidden
"""

import redis


def safe_incr(r, name: str, amount: int = 1) -> dict:
    if type(amount) is not int:
        raise TypeError(f"amount must be an int, not {type(amount).__name__}")
    key = r.key(name)
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as e:
        text = str(e)
        if text.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        found = r.get(key)
        if found is None:
            found = "0"
        if "overflow" in text:
            return {"ok": False, "error": "overflow", "found": found}
        return {"ok": False, "error": "not_integer", "found": found}
