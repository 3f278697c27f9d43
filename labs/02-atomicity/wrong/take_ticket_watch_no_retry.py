"""Wrong: take_ticket uses WATCH/MULTI/EXEC and returns None on WatchError as if the event were sold out.

Caught by: test_no_buyer_is_turned_away_while_seats_are_left_hidden
"""

import redis


def take_ticket(r, event: str) -> int | None:
    cap_key, sold_key = r.key("event", event, "capacity"), r.key("event", event, "sold")
    with r.pipeline() as pipe:
        try:
            pipe.watch(cap_key, sold_key)
            capacity = int(pipe.get(cap_key) or 0)
            sold = int(pipe.get(sold_key) or 0)
            if sold >= capacity:
                pipe.unwatch()
                return None
            pipe.multi()
            pipe.incr(sold_key)
            (seat,) = pipe.execute()
            return int(seat)
        except redis.WatchError:
            return None
