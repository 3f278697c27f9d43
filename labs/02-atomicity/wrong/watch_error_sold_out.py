"""take_ticket uses WATCH and MULTI but answers "sold out" when another buyer changed the count first.

Caught by: test_no_buyer_is_turned_away_while_seats_are_left_hidden
"""
import redis


def take_ticket(r, event):
    capacity_key, sold_key = r.key("event", event, "capacity"), r.key("event", event, "sold")
    with r.pipeline() as pipe:
        try:
            pipe.watch(sold_key)
            capacity = int(pipe.get(capacity_key) or 0)
            sold = int(pipe.get(sold_key) or 0)
            if sold >= capacity:
                return None
            pipe.multi()
            pipe.incr(sold_key)
            return int(pipe.execute()[0])
        except redis.WatchError:
            return None
