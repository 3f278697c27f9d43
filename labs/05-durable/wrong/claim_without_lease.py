"""Wrong: an atomic claim that simply removes the task (ZREM's reply decides the winner), with no
processing set and no lease. No task is claimed twice, but a worker that dies after claiming takes
its tasks with it: nothing can ever give them back.
"""
from redis_course.lessons import durable as _d
from redis_course.lessons.durable import SimulatedCrash, crash_point  # noqa: F401


def schedule(r, payload, due_ms):
    return _d.schedule(r, payload, due_ms)


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
    return removed == 1


def recover(r, now_ms):
    return 0                                      # nothing to recover: claimed tasks are gone


def flush(r, db_path, name, crash_at=None):
    return _d.flush_safe(r, _d.Ledger(db_path), name, crash_at)
