"""claim takes only tasks due strictly before now_ms, so a task due at now_ms waits.

Caught by: test_tasks_are_claimed_when_due_earliest_first
"""

EDITS = [("redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)",
          "redis.call('ZRANGEBYSCORE', due, '-inf', '(' .. now, 'LIMIT', 0, limit)")]
