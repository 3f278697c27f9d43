"""Wrong: deposit maps only Redis's 'would overflow' refusal to OverflowError, so an amount of 2**63 or more escapes as ResponseError.

Caught by: test_deposit_refuses_overflow_hidden
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
    _check_cents(cents)
    try:
        return r.incrby(r.key("balance", account), cents)
    except redis.exceptions.ResponseError as exc:
        if "overflow" in str(exc):
            raise OverflowError("the balance would pass 2**63 - 1") from exc
        raise
