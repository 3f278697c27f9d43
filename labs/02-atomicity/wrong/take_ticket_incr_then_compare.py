"""Wrong: take_ticket INCRs sold first and returns None when the result passes capacity, without undoing the increment.

Caught by: test_tickets_are_numbered_until_sold_out
"""


def take_ticket(r, event: str) -> int | None:
    capacity = int(r.get(r.key("event", event, "capacity")) or 0)
    seat = r.incr(r.key("event", event, "sold"))
    if seat > capacity:
        return None
    return seat
