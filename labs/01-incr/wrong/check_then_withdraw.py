"""Wrong: withdraw checks the balance with GET and then decrements with DECRBY. Two processes can both
see enough money before either decrements, so concurrent withdrawals overdraw the account."""


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
