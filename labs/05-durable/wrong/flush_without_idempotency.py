"""Wrong: the live counter is moved aside with RENAME (nothing lost to traffic or to a crash
before the commit), but the database does not record which pending value it has applied: after
a crash between the commit and the DEL of the pending key, the next flush adds it a second time.
"""
import sqlite3
from contextlib import closing

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
    live = r.key("counter", name)
    pending = f"{live}:pending"
    script = """
    if redis.call('EXISTS', KEYS[2]) == 0 then
      if redis.call('EXISTS', KEYS[1]) == 0 then return false end
      redis.call('RENAME', KEYS[1], KEYS[2])
    end
    return redis.call('GET', KEYS[2])
    """
    value = r.eval(script, 2, live, pending)
    if not value:
        return 0
    delta = int(value)
    crash_point("claimed", crash_at)
    with closing(sqlite3.connect(db_path, timeout=30)) as db:
        db.execute("INSERT INTO counters (name, total) VALUES (?, ?) "
                   "ON CONFLICT (name) DO UPDATE SET total = counters.total + excluded.total", (name, delta))
        crash_point("applied", crash_at)
        db.commit()
    crash_point("committed", crash_at)
    r.delete(pending)
    return delta
