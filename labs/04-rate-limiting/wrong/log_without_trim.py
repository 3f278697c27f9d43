"""Wrong: the sliding log is never trimmed (no ZREMRANGEBYSCORE), so units that left the window still count.

sliding_window takes the log's size (ZCARD) as the longest window's count, which is right only once
the units older than that window are removed: here they stay (until the key expires), so
``remaining`` counts units that have long left the window, and the log grows with every request.

Caught by: test_sliding_window_lets_entries_leave_exactly_hidden
"""

EDITS = [("    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest)\n", "")]
