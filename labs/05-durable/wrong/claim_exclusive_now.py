"""claim takes only tasks due strictly before now_ms, so a task due at now_ms waits."""

EDITS = [("redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)",
          "redis.call('ZRANGEBYSCORE', due, '-inf', '(' .. now, 'LIMIT', 0, limit)")]
