"""Wrong: claim pops the due tasks with ZPOPMIN and records their leases in a second round trip.

Caught by: test_a_worker_dying_inside_claim_loses_no_task_hidden
"""


def claim(r, now_ms: int, lease_ms: int, limit: int = 10) -> list:
    due, processing = r.key("queue", "due"), r.key("queue", "processing")
    attempts, tasks = r.key("queue", "attempts"), r.key("queue", "tasks")
    popped = r.zpopmin(due, limit)            # atomic: no two workers can pop the same task
    ready = [task for task, score in popped if score <= now_ms]
    early = {task: score for task, score in popped if score > now_ms}
    with r.pipeline() as tx:                  # then the lease, the attempt and the payload
        if early:
            tx.zadd(due, early)
        for task in ready:
            tx.zadd(processing, {task: now_ms + lease_ms})
            tx.hincrby(attempts, task, 1)
            tx.hget(tasks, task)
        replies = tx.execute()[1 if early else 0:]
    return [[int(task), replies[3 * i + 2], int(replies[3 * i + 1])] for i, task in enumerate(ready)]
