"""Wrong: take_views reads under WATCH and resets in MULTI/EXEC, but returns 0 when EXEC fails, without trying again.

Caught by: test_take_views_loses_nothing_under_load_hidden
"""

import redis


def take_views(r, post_id: int) -> int:
    key = r.key("views", "post", post_id)
    with r.pipeline() as pipe:
        try:
            pipe.watch(key)
            value = pipe.get(key)
            pipe.multi()
            pipe.set(key, 0)
            pipe.execute()
            return int(value) if value is not None else 0
        except redis.exceptions.WatchError:
            return 0
