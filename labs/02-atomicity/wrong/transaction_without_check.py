"""Wrong: MULTI/EXEC around DECRBY and INCRBY (or INCR), but no balance or capacity check.

The transaction keeps the two writes together, so no cent is lost, but nothing stops a transfer
larger than the balance: balances go negative and tickets are sold past capacity, even with a
single caller.

Caught by: test_tickets_are_numbered_until_sold_out
"""

EDITS = [('''    done = r.eval(script, 2, r.key("account", src), r.key("account", dst), amount)
    return done == 1
''', '''    with r.pipeline(transaction=True) as pipe:
        pipe.decrby(r.key("account", src), amount)
        pipe.incrby(r.key("account", dst), amount)
        pipe.execute()
    return True
''')]


def take_ticket(r, event: str):
    with r.pipeline(transaction=True) as pipe:
        pipe.get(r.key("event", event, "capacity"))
        pipe.incr(r.key("event", event, "sold"))
        _capacity, seat = pipe.execute()
    return seat
