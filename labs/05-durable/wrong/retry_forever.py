"""Wrong: leases, stale claims and recovery are right, but max_attempts is ignored: a failed or
abandoned task always goes back to queue:due, so a poison task is retried for ever and nothing
ever reaches the dead-letter hash.

Caught by: test_a_failing_task_is_retried_then_dead_lettered_with_its_reason
"""

EDITS = [("""    if tonumber(attempt) < tonumber(max_attempts) then
      redis.call('ZADD', due, retry_at, id)
      return 'retry'
    end
    redis.call('HSET', dead, id, reason)
    return 'dead'
""", """    redis.call('ZADD', due, retry_at, id)
    return 'retry'
"""),
         ("""      if tonumber(redis.call('HGET', attempts, task) or '0') < max_attempts then
        redis.call('ZADD', due, now, task)
        back = back + 1
      else
        redis.call('HSET', dead, task, 'lease expired')
        buried = buried + 1
      end
""", """      redis.call('ZADD', due, now, task)
      back = back + 1
""")]
