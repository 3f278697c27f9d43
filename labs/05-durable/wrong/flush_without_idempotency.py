"""Wrong: the usage hash is moved aside with RENAME (nothing lost to traffic or to a crash before
the commit), but the database does not record which pending batch it has applied: after a crash
between the commit and the DEL of the pending hash, the next flush adds the batch a second time.

Caught by: test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice
"""


def flush(r, db_path):
    live = r.key("usage")
    pending = r.key("usage", "pending")
    script = """
    if redis.call('EXISTS', KEYS[2]) == 0 then
      if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
      redis.call('RENAME', KEYS[1], KEYS[2])
    end
    return redis.call('HGETALL', KEYS[2])
    """
    flat = r.eval(script, 2, live, pending)
    units = {flat[i]: int(flat[i + 1]) for i in range(0, len(flat), 2)}
    if not units:
        return {}
    crash_point("claimed")
    with closing(sqlite3.connect(db_path, timeout=30)) as db:
        db.executemany("INSERT INTO counters (name, total) VALUES (?, ?) "
                       "ON CONFLICT (name) DO UPDATE SET total = total + excluded.total", units.items())
        crash_point("applied")
        db.commit()
    crash_point("committed")
    r.delete(pending)
    return units
