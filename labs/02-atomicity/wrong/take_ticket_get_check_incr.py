"""Wrong: take_ticket GETs capacity and sold, checks in Python, then INCRs sold as a separate command.

Caught by: test_a_sale_right_after_the_read_is_not_missed_hidden, test_no_overselling_under_concurrency
"""


def take_ticket(r, event: str) -> int | None:
    capacity = int(r.get(r.key("event", event, "capacity")) or 0)
    sold_key = r.key("event", event, "sold")
    sold = int(r.get(sold_key) or 0)
    if sold >= capacity:
        return None
    return r.incr(sold_key)
