"""Wrong: a float balance. deposit and withdraw keep dollars with INCRBYFLOAT (cents / 100) and accept
float amounts, so Redis holds "19.99" instead of 1999 cents, rounding creeps in, and 19.99 is not refused."""


def _check(cents):
    if type(cents) is not int:
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"amount must be positive, got {cents}")


def deposit(r, account, cents):
    if cents <= 0:
        raise ValueError("amount must be positive")
    return round(r.incrbyfloat(r.key("balance", account), cents / 100) * 100)


def withdraw(r, account, cents):
    if cents <= 0:
        raise ValueError("amount must be positive")
    key = r.key("balance", account)
    left = r.incrbyfloat(key, -cents / 100)
    if left < 0:
        r.incrbyfloat(key, cents / 100)
        raise ValueError("insufficient funds")
    return round(left * 100)
