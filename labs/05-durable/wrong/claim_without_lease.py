"""Wrong: an atomic claim that simply removes the task (ZREM's reply decides the winner), with no
processing set and no lease. No task is claimed twice, but a worker that dies after claiming takes
its tasks with it: nothing can ever give them back, and nothing can tell a live claim from a stale one.

Caught by: test_tasks_are_claimed_when_due_earliest_first
"""


def claim(r, now_ms, lease_ms, limit=10):
    due, tasks = r.key("queue", "due"), r.key("queue", "tasks")
    claimed = []
    for task_id in r.zrangebyscore(due, "-inf", now_ms, start=0, num=limit):
        if r.zrem(due, task_id) == 1:             # only the worker whose ZREM removed it owns it
            attempt = r.hincrby(r.key("queue", "attempts"), task_id, 1)
            claimed.append([int(task_id), r.hget(tasks, task_id), attempt])
    return claimed


def ack(r, task_id, attempt):
    removed = r.hdel(r.key("queue", "tasks"), str(task_id))
    r.hdel(r.key("queue", "attempts"), str(task_id))
    return "acked" if removed else "unknown"


def fail(r, task_id, attempt, reason, retry_at_ms, max_attempts=3):
    if not r.hexists(r.key("queue", "tasks"), str(task_id)):
        return "unknown"
    if attempt < max_attempts:
        r.zadd(r.key("queue", "due"), {str(task_id): retry_at_ms})
        return "retry"
    r.hset(r.key("queue", "dead"), str(task_id), reason)
    return "dead"


def recover(r, now_ms, max_attempts=3):
    return {"requeued": 0, "dead": 0}             # nothing to recover: claimed tasks are gone
