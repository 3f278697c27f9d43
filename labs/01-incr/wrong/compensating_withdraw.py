"""withdraw runs DECRBY and gives the money back with INCRBY when it went below 0: two steps, not one.

Caught by: test_a_crash_inside_withdraw_loses_no_money_hidden
"""

EDITS = [('    left = r.register_script(WITHDRAW)(keys=[r.key("balance", account)], args=[cents])\n'
          '    if left < 0:\n',
          '    key = r.key("balance", account)\n'
          '    left = r.decrby(key, cents)\n'
          '    if left < 0:\n'
          '        r.incrby(key, cents)\n')]
