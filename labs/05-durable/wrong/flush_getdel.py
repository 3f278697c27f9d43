"""Wrong: HGETALL and DEL in one MULTI/EXEC take the usage and reset it atomically (nothing is
lost to traffic), but between the EXEC and the commit the batch lives only in the process: a
crash there loses it.

Caught by: test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice
"""


def flush(r, db_path):
    key = r.key("usage")
    with r.pipeline() as tx:
        tx.hgetall(key)
        tx.delete(key)
        taken, _ = tx.execute()
    units = {customer: int(n) for customer, n in taken.items()}
    crash_point("claimed")              # a crash here loses the batch for good
    if units:
        with closing(sqlite3.connect(db_path, timeout=30)) as db:
            db.executemany("INSERT INTO counters (name, total) VALUES (?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET total = total + excluded.total", units.items())
            crash_point("applied")
            db.commit()
    crash_point("committed")
    return units
