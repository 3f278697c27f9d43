"""Wrong: check with GET, then act with DECRBY/INCRBY (or INCR), without WATCH.

Each write is atomic, so no cent is lost, but the check and the act are two steps: several
transfers can all see "enough money" and all withdraw, driving the balance below zero, and several
buyers can all see a free seat and all take one, selling more tickets than there are seats.

Caught by: test_a_withdrawal_right_after_the_read_is_not_missed_hidden
"""

EDITS = [('''    done = r.eval(script, 2, r.key("account", src), r.key("account", dst), amount)
    return done == 1
''', '''    src_key, dst_key = r.key("account", src), r.key("account", dst)
    if int(r.get(src_key) or 0) < amount:
        return False
    r.decrby(src_key, amount)
    r.incrby(dst_key, amount)
    return True
''')]


def take_ticket(r, event: str):
    capacity = int(r.get(r.key("event", event, "capacity")) or 0)
    if int(r.get(r.key("event", event, "sold")) or 0) >= capacity:
        return None
    return r.incr(r.key("event", event, "sold"))
