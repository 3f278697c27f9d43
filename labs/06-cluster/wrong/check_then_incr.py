"""Wrong: the request marker is checked and set in separate commands.

GET the marker; if there is none, INCRBY and SET the marker.  A retry that arrives while the first
attempt is between GET and SET sees no marker and increments a second time.

Caught by: test_concurrent_retries_count_each_request_once_hidden
"""

EDITS = [("""    return int(r.eval(INCR_ONCE_LUA, 2, counter, marker, by, ttl_s))
""", """    done = r.get(marker)
    if done is not None:
        return int(done)
    value = r.incrby(counter, by)
    r.set(marker, value, ex=ttl_s)
    return value
""")]
