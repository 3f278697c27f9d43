"""Wrong: read both balances with GET, compute in Python, write them back with SET.

Correct for one caller at a time.  Under concurrency two transfers read the same old balances and
the later SET overwrites the earlier one: money appears or disappears, and two buyers get the same
seat.

Caught by: test_no_buyer_is_turned_away_while_seats_are_left_hidden
"""

EDITS = [('''    done = r.eval(script, 2, r.key("account", src), r.key("account", dst), amount)
    return done == 1
''', '''    src_key, dst_key = r.key("account", src), r.key("account", dst)
    src_balance = int(r.get(src_key) or 0)
    dst_balance = int(r.get(dst_key) or 0)
    if src_balance < amount:
        return False
    r.set(src_key, src_balance - amount)
    r.set(dst_key, dst_balance + amount)
    return True
''')]


def take_ticket(r, event: str):
    capacity = int(r.get(r.key("event", event, "capacity")) or 0)
    sold = int(r.get(r.key("event", event, "sold")) or 0)
    if sold >= capacity:
        return None
    r.set(r.key("event", event, "sold"), sold + 1)
    return sold + 1
