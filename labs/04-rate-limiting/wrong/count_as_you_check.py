"""Wrong: each limit is counted as soon as it says yes.

fixed_window is one atomic script, but it writes each limit's new count as soon as that limit has
room, before looking at the next: when a later limit denies, the earlier ones have already been
charged for a request that never went ahead.

Caught by: test_every_limit_must_allow
"""

EDITS = [("      if used + cost > cap and till_next > wait then wait = till_next end\n",
          "      if used + cost > cap and till_next > wait then wait = till_next end\n"
          "      if used + cost <= cap then\n"
          "        redis.call('HSET', KEYS[1], fields[2 * i - 1], k, fields[2 * i], used + cost)\n"
          "      end\n")]
