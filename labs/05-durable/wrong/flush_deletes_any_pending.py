"""Wrong: flush deletes the pending batch when it is done without checking that it is still its own batch.

Caught by: test_a_held_up_flush_never_deletes_a_newer_batch_hidden
"""

EDITS = [('''    done = """
    local pending, batch_of_pending = KEYS[1], KEYS[2]
    if redis.call('GET', batch_of_pending) ~= ARGV[1] then return 0 end
    return redis.call('DEL', pending, batch_of_pending)
    """
    r.eval(done, 2, names[1], names[2], batch_id)
''', '''    r.delete(names[1], names[2])              # the batch is in the database: drop the pending copy
''')]
