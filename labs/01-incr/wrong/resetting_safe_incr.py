"""Wrong: safe_incr "repairs" a value it cannot increment by overwriting it with SET, silently destroying
whatever the key held (and a list becomes a string), and reports success."""


def safe_incr(r, name, amount=1):
    key = r.key(name)
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError:
        r.set(key, amount)
        return {"ok": True, "value": amount}


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
    left = r.decrby(key, cents)
    if left < 0:
        r.incrby(key, cents)
        raise ValueError("insufficient funds")
    return left
