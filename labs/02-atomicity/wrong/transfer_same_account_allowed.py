"""Wrong: transfer does not check src == dst; the script then debits and credits the same key and returns True.

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
    _check_amount(amount)
    script = r.register_script(TRANSFER)
    moved = script(keys=[r.key("account", src), r.key("account", dst)], args=[amount])
    return moved == 1
