"""Wrong: GETDEL takes the value and resets the counter atomically (nothing is lost to traffic),
but between GETDEL and the commit the value lives only in the process: a crash there loses it.
"""
from redis_course.lessons import durable as _d
from redis_course.lessons.durable import SimulatedCrash, crash_point  # noqa: F401


def schedule(r, payload, due_ms):
    return _d.schedule(r, payload, due_ms)


def claim(r, now_ms, lease_ms, limit=10):
    return _d.claim(r, now_ms, lease_ms, limit)


def ack(r, task_id, attempt):
    return _d.ack(r, task_id, attempt)


def recover(r, now_ms):
    return _d.recover(r, now_ms)


def flush(r, db_path, name, crash_at=None):
    return _d.flush_getdel(r, _d.Ledger(db_path), name, crash_at)
