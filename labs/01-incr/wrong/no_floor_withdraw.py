"""Wrong: withdraw trusts DECRBY blindly. DECRBY has no floor, so the balance goes negative instead of
the withdrawal being refused.

Caught by: test_withdraw_refuses_an_overdraft
"""

EDITS = [('    left = r.register_script(WITHDRAW)(keys=[r.key("balance", account)], args=[cents])\n'
          '    if left < 0:\n'
          '        raise ValueError(f"insufficient funds in account {account}")\n'
          '    return left\n',
          '    return r.decrby(r.key("balance", account), cents)\n')]
