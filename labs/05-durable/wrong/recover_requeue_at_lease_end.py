"""Wrong: recover puts an expired task back into queue:due with its lease's end as the score, not now_ms.

Caught by: test_a_recovered_task_is_due_at_the_time_of_the_recovery_hidden
"""

EDITS = [("for _, task in ipairs(redis.call('ZRANGEBYSCORE', processing, '-inf', now)) do\n"
          "      redis.call('ZREM', processing, task)",
          "for _, task in ipairs(redis.call('ZRANGEBYSCORE', processing, '-inf', now)) do\n"
          "      local ended = redis.call('ZSCORE', processing, task)\n"
          "      redis.call('ZREM', processing, task)"),
         ("redis.call('ZADD', due, now, task)", "redis.call('ZADD', due, ended, task)")]
