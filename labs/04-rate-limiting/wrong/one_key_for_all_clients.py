"""The fixed window keeps one key for every client, so clients use up each other's limit.

Caught by: test_fixed_window_under_sixteen_processes_hidden
"""

EDITS = [('return _decide(r, script, r.key("rl", "fixed", client_id)',
          'return _decide(r, script, r.key("rl", "fixed")')]
