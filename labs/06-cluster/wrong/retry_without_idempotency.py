"""Wrong: incr_once ignores the request id.

A client that retries after a timeout sends the same increment again, and INCRBY counts it again:
the counter ends higher than the number of requests, and the two attempts get different answers.

Caught by: test_a_retried_increment_counts_once
"""

EDITS = [('    return int(r.eval(INCR_ONCE_LUA, 2, counter, marker, by, ttl_s))\n',
          '    return r.incrby(counter, by)\n')]
