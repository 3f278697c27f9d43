"""Wrong: withdraw treats any result that is not positive as the script's refusal, so emptying the account raises after the money was taken.

Caught by: test_concurrent_withdrawals_never_overdraw_hidden
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
    script = r.register_script(WITHDRAW)
    result = script(keys=[r.key("balance", account)], args=[cents])
    if not result > 0:
        raise ValueError("insufficient funds")
    return result
