"""ack removes the task from queue:processing but leaves its payload and attempts behind.

Caught by: test_ack_finishes_the_task_once
"""

EDITS = [("""    redis.call('ZREM', processing, id)
    redis.call('HDEL', attempts, id)
    redis.call('HDEL', tasks, id)
    return 'acked'
""", """    redis.call('ZREM', processing, id)
    return 'acked'
""")]
