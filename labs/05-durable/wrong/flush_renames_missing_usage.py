"""flush renames the usage hash without checking that it exists, so a flush with nothing counted fails."""


def flush(r, db_path: str) -> dict:
    """Move the usage counted in the hash ``usage`` into the SQLite database at ``db_path``.

    Add each customer's units to ``counters.total`` of the row ``name = <customer>`` (create rows
    that are missing) and return what this call added, ``{customer: units}`` (``{}`` if nothing).
    Usage keeps arriving while you flush, and several flushers may run at once: no unit may be
    lost or counted twice.  The process may die after any step: call ``crash_point`` with the step
    ``"claimed"`` once the batch is taken from Redis, ``"applied"`` after the SQL writes and before
    the commit, and ``"committed"`` after the commit.  A later ``flush`` must finish the job.

    The recipe, as in the lesson but for a whole hash: atomically move ``usage`` aside to a pending
    hash with a new batch id (Lua: RENAME + INCR, or return the pending batch left by a crash, with
    HGETALL); in one SQL transaction INSERT the batch id into ``flushes`` and, only if it was new,
    add every customer's units; then delete the pending hash if it still carries that batch id.
    Cost: two EVAL round trips, O(C) for C customers, and one SQL transaction.
    """
    live = r.key("usage")
    names = [live, r.key("usage", "pending"), r.key("usage", "pending", "batch"), r.key("usage", "batches")]
    take = """
    local live, pending, batch_of_pending, batches = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
    local batch = redis.call('GET', batch_of_pending)
    if not batch then
      batch = redis.call('INCR', batches)
      redis.call('RENAME', live, pending)          -- HINCRBY from now on starts a fresh hash
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
    done = """
    local pending, batch_of_pending = KEYS[1], KEYS[2]
    if redis.call('GET', batch_of_pending) ~= ARGV[1] then return 0 end
    return redis.call('DEL', pending, batch_of_pending)
    """
    r.eval(done, 2, names[1], names[2], batch_id)
    return units if first_time else {}
