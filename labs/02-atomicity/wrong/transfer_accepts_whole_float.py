"""Wrong: transfer lets a float with no fractional part through (10.0 becomes 10) and only refuses fractions such as 2.5.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


TRANSFER = """
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if balance < amount then
  return 0
end
redis.call('DECRBY', KEYS[1], amount)
redis.call('INCRBY', KEYS[2], amount)
return 1
"""


def _check_amount(amount):
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive int number of cents")


def transfer(r, src: str, dst: str, amount: int) -> bool:
    if isinstance(amount, float) and amount.is_integer():
        amount = int(amount)
    _check_amount(amount)
    if src == dst:
        raise ValueError("cannot transfer to the same account")
    script = r.register_script(TRANSFER)
    moved = script(keys=[r.key("account", src), r.key("account", dst)], args=[amount])
    return moved == 1
