"""Wrong: recover loops in Python, one round trip per command, checking ZREM's reply before moving a task.

Caught by: test_claim_ack_fail_and_recover_are_one_script_each_hidden
"""


def recover(r, now_ms: int, max_attempts: int = 3) -> dict:
    processing, due = r.key("queue", "processing"), r.key("queue", "due")
    attempts, dead = r.key("queue", "attempts"), r.key("queue", "dead")
    back = buried = 0
    for task in r.zrangebyscore(processing, "-inf", now_ms):
        if r.zrem(processing, task) != 1:         # another recover took it first
            continue
        if int(r.hget(attempts, task) or 0) < max_attempts:
            r.zadd(due, {task: now_ms})
            back += 1
        else:
            r.hset(dead, task, "lease expired")
            buried += 1
    return {"requeued": back, "dead": buried}
