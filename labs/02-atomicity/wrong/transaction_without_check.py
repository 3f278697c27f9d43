"""Wrong: MULTI/EXEC around DECRBY and INCRBY (or INCR), but no balance or capacity check.

The transaction keeps the two writes together, so no cent is lost, but nothing stops a transfer
larger than the balance: balances go negative and tickets are sold past capacity, even with a
single caller.
"""


def _valid(src, dst, amount):
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive whole number of cents")
    if src == dst:
        raise ValueError("src and dst must be different accounts")


def transfer(r, src: str, dst: str, amount: int) -> bool:
    _valid(src, dst, amount)
    with r.pipeline(transaction=True) as pipe:
        pipe.decrby(r.key("account", src), amount)
        pipe.incrby(r.key("account", dst), amount)
        pipe.execute()
    return True


def take_ticket(r, event: str):
    with r.pipeline(transaction=True) as pipe:
        pipe.get(r.key("event", event, "capacity"))
        pipe.incr(r.key("event", event, "sold"))
        _capacity, seat = pipe.execute()
    return seat
