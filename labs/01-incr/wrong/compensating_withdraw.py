"""withdraw runs DECRBY and gives the money back with INCRBY when it went below 0: two steps, not one."""


def withdraw(r, account, cents):
    if type(cents) is not int:
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"a withdrawal must be positive, got {cents}")
    key = r.key("balance", account)
    left = r.decrby(key, cents)
    if left < 0:
        r.incrby(key, cents)
        raise ValueError(f"insufficient funds in account {account}")
    return left
