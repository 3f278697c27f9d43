"""Wrong: withdraw checks the amount with isinstance(cents, int) and a sign test, so True withdraws one cent.

Caught by: test_withdraw_checks_its_arguments_hidden
"""


def withdraw(r, account: int, cents: int) -> int:
    if not isinstance(cents, int):
        raise TypeError("cents must be an int")
    if cents <= 0:
        raise ValueError("the amount must be positive")
    script = r.register_script(WITHDRAW)
    result = script(keys=[r.key("balance", account)], args=[cents])
    if result == -1:
        raise ValueError("insufficient funds")
    return result
