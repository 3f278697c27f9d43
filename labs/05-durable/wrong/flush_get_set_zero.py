"""Wrong: the flush as it is usually written, for a hash: HGETALL the usage, add it in SQL, then
HSET every field back to 0. Usage that arrives between the HGETALL and the HSET is erased, and a
crash after the commit makes the next flush add the same batch again.

Caught by: test_a_crash_at_any_step_loses_nothing_and_counts_nothing_twice
"""


def flush(r, db_path):
    key = r.key("usage")
    units = {customer: int(n) for customer, n in r.hgetall(key).items() if int(n)}
    crash_point("claimed")
    if units:
        with closing(sqlite3.connect(db_path, timeout=30)) as db:
            db.executemany("INSERT INTO counters (name, total) VALUES (?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET total = total + excluded.total", units.items())
            crash_point("applied")
            db.commit()
    crash_point("committed")
    if units:
        r.hset(key, mapping={customer: 0 for customer in units})   # erases what arrived since HGETALL
    return units
