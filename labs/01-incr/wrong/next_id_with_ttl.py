"""Wrong: next_id gives ids:<kind> a TTL of seven days "so that old counters go away": when it expires,
the ids start again at 1 and are handed out twice.  The contract says the key has no TTL.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""

EDITS = [('    return r.incr(r.key("ids", kind))\n',
          '    key = r.key("ids", kind)\n'
          '    with r.pipeline() as pipe:\n'
          '        pipe.incr(key)\n'
          '        pipe.expire(key, 7 * 24 * 3600)\n'
          '        value, _ = pipe.execute()\n'
          '    return value\n')]
