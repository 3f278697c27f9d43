"""Wrong: the article's loop. ZRANGEBYSCORE reads the due ids, then each is removed with its own
ZREM whose reply is ignored. Alone it works; with several workers two of them read the same ids
before either removes them, and both run the task.

Caught by: test_no_task_is_claimed_twice_by_concurrent_workers
"""


def claim(r, now_ms, lease_ms, limit=10):
    due, processing = r.key("queue", "due"), r.key("queue", "processing")
    claimed = []
    for task_id in r.zrangebyscore(due, "-inf", now_ms, start=0, num=limit):
        r.zrem(due, task_id)                      # the reply says whether we won: ignored
        r.zadd(processing, {task_id: now_ms + lease_ms})
        attempt = r.hincrby(r.key("queue", "attempts"), task_id, 1)
        claimed.append([int(task_id), r.hget(r.key("queue", "tasks"), task_id), attempt])
    return claimed
