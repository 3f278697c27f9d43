"""Wrong: withdraw checks the balance with GET in Python and raises when it looks too small, then DECRBYs in a second command.

Caught by: test_a_withdrawal_between_the_check_and_the_decrement_never_overdraws_hidden, test_concurrent_withdrawals_never_overdraw_hidden
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
    if int(r.get(key) or 0) < cents:
        raise ValueError("insufficient funds")
    result = r.decrby(key, cents)
    if result == -1:
        raise ValueError("insufficient funds")
    return result
