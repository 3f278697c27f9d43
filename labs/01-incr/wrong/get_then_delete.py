"""Wrong: take_views reads with GET and then deletes with DEL. A view counted between the two commands
is deleted without ever being returned: it is lost."""


def take_views(r, post_id):
    key = r.key("views", "post", post_id)
    value = r.get(key)
    r.delete(key)
    return int(value) if value is not None else 0


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
