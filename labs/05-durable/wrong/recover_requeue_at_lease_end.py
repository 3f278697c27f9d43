"""Wrong: recover puts an expired task back into queue:due with its lease's end as the score, not now_ms."""

EDITS = [("for _, task in ipairs(redis.call('ZRANGEBYSCORE', processing, '-inf', now)) do\n"
          "      redis.call('ZREM', processing, task)",
          "for _, task in ipairs(redis.call('ZRANGEBYSCORE', processing, '-inf', now)) do\n"
          "      local ended = redis.call('ZSCORE', processing, task)\n"
          "      redis.call('ZREM', processing, task)"),
         ("redis.call('ZADD', due, now, task)", "redis.call('ZADD', due, ended, task)")]
