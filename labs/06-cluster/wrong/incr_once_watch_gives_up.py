"""Wrong: incr_once uses WATCH and MULTI, and on a WatchError returns the marker's value instead of trying again.

Caught by: test_concurrent_retries_count_each_request_once_hidden
"""
from redis.exceptions import WatchError


def incr_once(r, name: str, request_id: str, by: int = 1, ttl_s: int = 3600) -> int:
    counter = r.key("counter", "{%s}" % name)
    marker = r.key("counter", "{%s}" % name, "req", request_id)
    with r.pipeline() as pipe:
        try:
            pipe.watch(counter, marker)
            done = pipe.get(marker)
            if done is not None:
                return int(done)                 # a retry: the recorded answer
            value = int(pipe.get(counter) or 0) + by
            pipe.multi()
            pipe.set(counter, value)
            pipe.set(marker, value, ex=ttl_s)
            pipe.execute()
            return value
        except WatchError:
            # someone changed the keys meanwhile: that was another attempt of this request
            return int(r.get(marker) or 0)
