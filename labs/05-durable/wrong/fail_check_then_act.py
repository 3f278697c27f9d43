"""Wrong: fail checks the lease in Python, then moves the task in a MULTI/EXEC of its own.

Caught by: test_claim_ack_fail_and_recover_are_one_script_each_hidden
"""


def fail(r, task_id: int, attempt: int, reason: str, retry_at_ms: int, max_attempts: int = 3) -> str:
    tasks, processing = r.key("queue", "tasks"), r.key("queue", "processing")
    attempts, due, dead = r.key("queue", "attempts"), r.key("queue", "due"), r.key("queue", "dead")
    if not r.hexists(tasks, str(task_id)):
        return "unknown"
    if r.zscore(processing, str(task_id)) is None or r.hget(attempts, str(task_id)) != str(attempt):
        return "stale"
    with r.pipeline() as tx:
        tx.zrem(processing, str(task_id))
        if attempt < max_attempts:
            tx.zadd(due, {str(task_id): retry_at_ms})
        else:
            tx.hset(dead, str(task_id), reason)
        tx.execute()
    return "retry" if attempt < max_attempts else "dead"
