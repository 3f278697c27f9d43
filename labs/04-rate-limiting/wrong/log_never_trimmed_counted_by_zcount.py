"""Wrong: the sliding log is never trimmed; ZCOUNT over the longest window keeps the counts right, but the log grows with every request.

Caught by: test_the_sliding_log_keeps_only_what_its_longest_window_holds_hidden
"""

EDITS = [("    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest)\n"
          "    local logged = redis.call('ZCARD', KEYS[1])\n",
          "    local logged = redis.call('ZCOUNT', KEYS[1], now - longest + 1, '+inf')\n"
          "    local old = redis.call('ZCARD', KEYS[1]) - logged\n"),
         ("local at = logged + cost - cap - 1", "local at = old + logged + cost - cap - 1")]
