"""Wrong: flush deletes the pending batch when it is done without checking that it is still its own batch."""


def flush(r, db_path: str) -> dict:
    live = r.key("usage")
    names = [live, r.key("usage", "pending"), r.key("usage", "pending", "batch"), r.key("usage", "batches")]
    take = """
    local live, pending, batch_of_pending, batches = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
    local batch = redis.call('GET', batch_of_pending)
    if not batch then
      if redis.call('EXISTS', live) == 0 then return false end
      batch = redis.call('INCR', batches)
      redis.call('RENAME', live, pending)
      redis.call('SET', batch_of_pending, batch)
    end
    return {tostring(batch), redis.call('HGETALL', pending)}
    """
    batch = r.eval(take, 4, *names)
    if not batch:
        return {}
    batch_id, flat = batch
    units = {flat[i]: int(flat[i + 1]) for i in range(0, len(flat), 2)}
    crash_point("claimed")
    with closing(sqlite3.connect(db_path, timeout=30)) as sql:
        first_time = sql.execute(
            "INSERT INTO flushes (flush_id, name, delta) VALUES (?, 'usage', ?) ON CONFLICT DO NOTHING",
            (f"usage:{batch_id}", sum(units.values()))).rowcount == 1
        if first_time:
            sql.executemany(
                "INSERT INTO counters (name, total) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET total = total + excluded.total", units.items())
        crash_point("applied")
        sql.commit()
    crash_point("committed")
    r.delete(names[1], names[2])              # the batch is in the database: drop the pending copy
    return units if first_time else {}
