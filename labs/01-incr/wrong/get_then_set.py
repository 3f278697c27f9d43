"""Wrong: read-modify-write. count_view, next_id and deposit GET the value, add in Python and SET it
back, so processes that read the same value overwrite each other and updates (and ids) are lost or repeated."""


def count_view(r, post_id):
    key = r.key("views", "post", post_id)
    value = int(r.get(key) or 0) + 1
    r.set(key, value)
    return value


def next_id(r, kind):
    key = r.key("ids", kind)
    value = int(r.get(key) or 0) + 1
    r.set(key, value)
    return value


def _check(cents):
    if type(cents) is not int:
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"amount must be positive, got {cents}")


def deposit(r, account, cents):
    _check(cents)
    key = r.key("balance", account)
    value = int(r.get(key) or 0) + cents
    if value > MAX_INT64:
        raise OverflowError("deposit would overflow")
    r.set(key, value)
    return value


def withdraw(r, account, cents):
    _check(cents)
    key = r.key("balance", account)
    left = r.decrby(key, cents)
    if left < 0:
        r.incrby(key, cents)
        raise ValueError("insufficient funds")
    return left
