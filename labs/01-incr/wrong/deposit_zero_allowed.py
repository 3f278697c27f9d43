"""Wrong: deposit refuses only negative amounts (cents < 0), so a deposit of 0 goes through.

Caught by: test_deposit_checks_its_arguments_hidden
"""

import redis


def _check_int(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")


def deposit(r, account: int, cents: int) -> int:
    _check_int(cents)
    if cents < 0:
        raise ValueError("the amount must not be negative")
    if cents > MAX_INT64:
        raise OverflowError("the deposit does not fit in 64 bits")
    try:
        return r.incrby(r.key("balance", account), cents)
    except redis.exceptions.ResponseError as exc:
        if "overflow" in str(exc):
            raise OverflowError("the balance would pass 2**63 - 1") from exc
        raise
