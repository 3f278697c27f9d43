"""Wrong: a float balance. deposit adds dollars with INCRBYFLOAT (cents / 100), so Redis holds "19.99"
instead of 1999 cents, rounding creeps in, and an integer-only DECRBY on that balance fails.

Caught by: test_deposit_keeps_integer_cents
"""

EDITS = [('return r.incrby(r.key("balance", account), cents)',
          'return round(r.incrbyfloat(r.key("balance", account), cents / 100) * 100)')]
