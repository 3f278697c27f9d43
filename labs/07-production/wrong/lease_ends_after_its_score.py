"""A lease whose score equals the server's now still counts as live: release and acquire judge it with >= and an open range.

Caught by: test_acquire_drops_the_lease_that_ends_at_its_own_millisecond_hidden, test_a_lease_has_ended_at_the_millisecond_of_its_score
"""

EDITS = [("redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)", "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)"),
         ("if score and tonumber(score) > now then return 1 end", "if score and tonumber(score) >= now then return 1 end"),
         ("if not score or tonumber(score) <= now then return 0 end", "if not score or tonumber(score) < now then return 0 end")]
