"""deposit, withdraw and safe_incr check amounts with isinstance(x, int), so True is taken as 1 cent."""
import redis


def safe_incr(r, name, amount=1):
    if not isinstance(amount, int):
        raise TypeError(f"amount must be an int, not {type(amount).__name__}")
    key = r.key(name)
    try:
        return {"ok": True, "value": r.incrby(key, int(amount))}
    except redis.exceptions.ResponseError as e:
        text = str(e)
        if text.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        if "overflow" in text:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}


def deposit(r, account, cents):
    if not isinstance(cents, int):
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"a deposit must be positive, got {cents}")
    if cents > MAX_INT64:
        raise OverflowError(f"{cents} cents is more than a balance can hold")
    try:
        return r.incrby(r.key("balance", account), int(cents))
    except redis.exceptions.ResponseError as e:
        if "overflow" in str(e):
            raise OverflowError(f"deposit of {cents} cents would overflow account {account}") from None
        raise


def withdraw(r, account, cents):
    if not isinstance(cents, int):
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"a withdrawal must be positive, got {cents}")
    left = r.register_script(WITHDRAW)(keys=[r.key("balance", account)], args=[int(cents)])
    if left < 0:
        raise ValueError(f"insufficient funds in account {account}")
    return left
