"""claim takes every due task, ignoring limit.

Caught by: test_claim_takes_at_most_limit
"""

EDITS = [("redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)",
          "redis.call('ZRANGEBYSCORE', due, '-inf', now)")]
