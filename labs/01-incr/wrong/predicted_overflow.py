"""safe_incr predicts an overflow with GET before INCRBY, so a change in between is misreported."""
import redis


def safe_incr(r, name, amount=1):
    if type(amount) is not int:
        raise TypeError(f"amount must be an int, not {type(amount).__name__}")
    key = r.key(name)
    try:
        current = r.get(key)
    except redis.exceptions.ResponseError:
        return {"ok": False, "error": "wrong_type", "found": r.type(key)}
    if (current is not None and current.lstrip("-").isdigit() and str(int(current)) == current
            and -MAX_INT64 - 1 <= int(current) <= MAX_INT64):
        if not -MAX_INT64 - 1 <= int(current) + amount <= MAX_INT64:
            return {"ok": False, "error": "overflow", "found": current}
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError:
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
