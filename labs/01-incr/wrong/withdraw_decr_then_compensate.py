"""Wrong: withdraw does DECRBY and, when the result is negative, INCRBY back, instead of the script.

Caught by: test_a_crash_inside_withdraw_loses_no_money_hidden
"""


def _check_int(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")


def _check_cents(cents):
    _check_int(cents)
    if cents <= 0:
        raise ValueError("the amount must be positive")


def withdraw(r, account: int, cents: int) -> int:
    _check_cents(cents)
    key = r.key("balance", account)
    result = r.decrby(key, cents)
    if result < 0:
        r.incrby(key, cents)
        raise ValueError("insufficient funds")
    return result
