"""Wrong: the flush as it is usually written: GET the counter, add it in SQL, SET it to 0.
Increments that arrive between the GET and the SET are erased, and a crash after the commit makes
the next flush add the same value again.
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
    return _d.flush_naive(r, _d.Ledger(db_path), name, crash_at)
