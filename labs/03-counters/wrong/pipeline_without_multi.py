"""record_view sends its commands in a pipeline without MULTI, which Redis does not run as one unit.

Caught by: test_a_crash_between_commands_leaves_no_key_without_ttl_hidden
"""

EDITS = [('    with r.pipeline(transaction=True) as p:\n        p.incr(counter)\n',
          '    with r.pipeline(transaction=False) as p:\n        p.incr(counter)\n')]
