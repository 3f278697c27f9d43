"""claim takes every due task, ignoring limit."""

EDITS = [("redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)",
          "redis.call('ZRANGEBYSCORE', due, '-inf', now)")]
