"""Wrong: recover dead-letters a task whose last lease ran out but leaves it in queue:processing.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""

EDITS = [("      redis.call('ZREM', processing, task)\n"
          "      if tonumber(redis.call('HGET', attempts, task) or '0') < max_attempts then\n",
          "      if tonumber(redis.call('HGET', attempts, task) or '0') < max_attempts then\n"
          "        redis.call('ZREM', processing, task)\n")]
