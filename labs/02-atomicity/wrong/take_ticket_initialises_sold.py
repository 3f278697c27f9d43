"""Wrong: the ticket script SETNXes sold to 0 before checking, so a sold-out (or capacity-less) event gets a sold key written.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


TAKE_TICKET = """
local capacity = tonumber(redis.call('GET', KEYS[1]) or '0')
redis.call('SETNX', KEYS[2], 0)
local sold = tonumber(redis.call('GET', KEYS[2]))
if sold >= capacity then
  return false
end
return redis.call('INCR', KEYS[2])
"""


def take_ticket(r, event: str) -> int | None:
    script = r.register_script(TAKE_TICKET)
    seat = script(keys=[r.key("event", event, "capacity"), r.key("event", event, "sold")])
    return None if seat is None else int(seat)
