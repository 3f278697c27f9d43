"""Wrong: withdraw checks the balance with GET and then decrements with DECRBY. Two processes can both
see enough money before either decrements, so concurrent withdrawals overdraw the account.

Caught by: test_a_withdrawal_between_the_check_and_the_decrement_never_overdraws_hidden, test_concurrent_withdrawals_never_overdraw_hidden
"""

EDITS = [('    left = r.register_script(WITHDRAW)(keys=[r.key("balance", account)], args=[cents])\n'
          '    if left < 0:\n'
          '        raise ValueError(f"insufficient funds in account {account}")\n'
          '    return left\n',
          '    key = r.key("balance", account)\n'
          '    if int(r.get(key) or 0) < cents:\n'
          '        raise ValueError(f"insufficient funds in account {account}")\n'
          '    return r.decrby(key, cents)\n')]
