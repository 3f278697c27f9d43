"""Wrong: the ticket script returns 0 for sold out and take_ticket passes that 0 on instead of None.

Caught by: test_tickets_are_numbered_until_sold_out
"""


TAKE_TICKET = """
local capacity = tonumber(redis.call('GET', KEYS[1]) or '0')
local sold = tonumber(redis.call('GET', KEYS[2]) or '0')
if sold >= capacity then
  return 0
end
return redis.call('INCR', KEYS[2])
"""


def take_ticket(r, event: str) -> int | None:
    script = r.register_script(TAKE_TICKET)
    seat = script(keys=[r.key("event", event, "capacity"), r.key("event", event, "sold")])
    return int(seat)
