"""ack removes the task from queue:processing but leaves its payload and attempts behind."""


def ack(r, task_id: int, attempt: int) -> str:
    """Acknowledge that claim number ``attempt`` of task ``task_id`` has been executed.

    Return ``"acked"`` and delete every trace of the task (processing, tasks, attempts) only if the
    task is in ``queue:processing`` and ``attempt`` is its current attempt: this claim holds the
    live lease.  Return ``"stale"``, changing nothing, when the task still exists but this claim no
    longer holds it (its lease ran out and it went back to ``queue:due``, another claim owns it, or
    it is dead), and ``"unknown"`` when there is no such task (never scheduled, or already acked).
    One Lua script, O(log N).
    """
    lua = """
    local processing, attempts, tasks = KEYS[1], KEYS[2], KEYS[3]
    local id, attempt = ARGV[1], ARGV[2]
    if redis.call('HEXISTS', tasks, id) == 0 then return 'unknown' end
    if not redis.call('ZSCORE', processing, id) then return 'stale' end
    if redis.call('HGET', attempts, id) ~= attempt then return 'stale' end
    redis.call('ZREM', processing, id)
    return 'acked'
    """
    names = [r.key("queue", part) for part in ("processing", "attempts", "tasks")]
    return r.eval(lua, 3, *names, str(task_id), str(attempt))
