"""Wrong: withdraw checks the balance with GET and then decrements with DECRBY. Two processes can both
see enough money before either decrements, so concurrent withdrawals overdraw the account."""
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
    _check(cents)
    try:
        return r.incrby(r.key("balance", account), cents)
    except redis.exceptions.ResponseError as e:
        if "overflow" in str(e):
            raise OverflowError("deposit would overflow") from None
        raise


def withdraw(r, account, cents):
    _check(cents)
    key = r.key("balance", account)
    if int(r.get(key) or 0) < cents:
        raise ValueError("insufficient funds")
    return r.decrby(key, cents)
