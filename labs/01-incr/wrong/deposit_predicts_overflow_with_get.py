"""Wrong: deposit predicts the overflow with GET, then sends INCRBY without catching its refusal.

Caught by: test_deposit_refuses_overflow_hidden
"""

def deposit(r, account: int, cents: int) -> int:
    if type(cents) is not int:
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"a deposit must be positive, got {cents}")
    if cents > MAX_INT64:
        raise OverflowError(f"{cents} cents is more than a balance can hold")
    key = r.key("balance", account)
    if int(r.get(key) or 0) + cents > MAX_INT64:
        raise OverflowError(f"deposit of {cents} cents would overflow account {account}")
    return r.incrby(key, cents)
