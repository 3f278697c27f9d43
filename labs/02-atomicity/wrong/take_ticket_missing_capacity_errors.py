"""Wrong: the ticket script does tonumber(GET capacity) without a default, so an event with no capacity key makes the script fail with an error.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


TAKE_TICKET = """
local capacity = tonumber(redis.call('GET', KEYS[1]))
local sold = tonumber(redis.call('GET', KEYS[2]) or '0')
if sold >= capacity then
  return false
end
return redis.call('INCR', KEYS[2])
"""


def take_ticket(r, event: str) -> int | None:
    script = r.register_script(TAKE_TICKET)
    seat = script(keys=[r.key("event", event, "capacity"), r.key("event", event, "sold")])
    return None if seat is None else int(seat)
