"""Wrong: deposit converts a float with no fractional part (10.0) to int and only refuses floats like 19.99.

Caught by: test_deposit_checks_its_arguments_hidden
"""

import redis


def _check_int(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")


def _check_cents(cents):
    _check_int(cents)
    if cents <= 0:
        raise ValueError("the amount must be positive")


def deposit(r, account: int, cents: int) -> int:
    if isinstance(cents, float) and cents.is_integer():
        cents = int(cents)
    _check_cents(cents)
    if cents > MAX_INT64:
        raise OverflowError("the deposit does not fit in 64 bits")
    try:
        return r.incrby(r.key("balance", account), cents)
    except redis.exceptions.ResponseError as exc:
        if "overflow" in str(exc):
            raise OverflowError("the balance would pass 2**63 - 1") from exc
        raise
