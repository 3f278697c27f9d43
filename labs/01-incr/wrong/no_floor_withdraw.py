"""Wrong: withdraw trusts DECRBY blindly. DECRBY has no floor, so the balance goes negative instead of
the withdrawal being refused."""


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
    return r.decrby(r.key("balance", account), cents)
