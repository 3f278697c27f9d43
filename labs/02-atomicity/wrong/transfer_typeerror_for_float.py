"""Wrong: transfer raises TypeError (not ValueError) when the amount is not an int, e.g. 2.5.

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
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError("amount must be an int number of cents")
    if amount <= 0:
        raise ValueError("amount must be positive")


def transfer(r, src: str, dst: str, amount: int) -> bool:
    _check_amount(amount)
    if src == dst:
        raise ValueError("cannot transfer to the same account")
    script = r.register_script(TRANSFER)
    moved = script(keys=[r.key("account", src), r.key("account", dst)], args=[amount])
    return moved == 1
