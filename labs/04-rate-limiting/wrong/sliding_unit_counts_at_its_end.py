"""Wrong: a unit allowed at t still counts at exactly t + window_ms (ZCOUNT from now - window_ms, and
the trim keeps a unit of that time), so a request at the window's edge is denied.

Caught by: test_sliding_window_lets_entries_leave_exactly_hidden
"""

EDITS = [("redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest)",
          "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest - 1)"),
         ("recent = redis.call('ZCOUNT', KEYS[1], now - span + 1, '+inf')",
          "recent = redis.call('ZCOUNT', KEYS[1], now - span, '+inf')")]
