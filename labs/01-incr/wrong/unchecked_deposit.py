"""Wrong: deposit sends whatever it gets to INCRBY. A float or a str reaches Redis (which answers with a
ResponseError, not TypeError), True is counted as 1 cent, negative deposits are accepted, and an overflow
escapes as ResponseError instead of OverflowError."""


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
