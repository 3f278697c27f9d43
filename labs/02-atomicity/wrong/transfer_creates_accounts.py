"""Wrong: the transfer script first SETNXes both accounts to 0 'so they exist', which writes even when the transfer is refused.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


TRANSFER = """
redis.call('SETNX', KEYS[1], 0)
redis.call('SETNX', KEYS[2], 0)
local balance = tonumber(redis.call('GET', KEYS[1]))
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
    if src == dst:
        raise ValueError("cannot transfer to the same account")
    script = r.register_script(TRANSFER)
    moved = script(keys=[r.key("account", src), r.key("account", dst)], args=[amount])
    return moved == 1
