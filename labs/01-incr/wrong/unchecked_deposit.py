"""Wrong: deposit sends whatever it gets to INCRBY. A float or a str reaches Redis (which answers with a
ResponseError, not TypeError), True is counted as 1 cent, negative deposits are accepted, and an overflow
escapes as ResponseError instead of OverflowError."""
import redis

MAX_INT64 = 2**63 - 1


def count_view(r, post_id):
    return r.incr(r.key("views", "post", post_id))


def view_count(r, post_id):
    value = r.get(r.key("views", "post", post_id))
    return int(value) if value is not None else 0


def take_views(r, post_id):
    value = r.getdel(r.key("views", "post", post_id))
    return int(value) if value is not None else 0


def next_id(r, kind):
    return r.incr(r.key("ids", kind))


def safe_incr(r, name, amount=1):
    key = r.key(name)
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as e:
        text = str(e)
        if text.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        if "overflow" in text:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}


def _check(cents):
    if type(cents) is not int:
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"amount must be positive, got {cents}")


def deposit(r, account, cents):
    return r.incrby(r.key("balance", account), int(cents) if isinstance(cents, bool) else cents)


def withdraw(r, account, cents):
    _check(cents)
    key = r.key("balance", account)
    left = r.decrby(key, cents)
    if left < 0:
        r.incrby(key, cents)
        raise ValueError("insufficient funds")
    return left
