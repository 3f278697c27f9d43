"""user_counters reads a user's counters with a pipeline of GETs instead of one MGET.

Caught by: test_each_function_sends_what_its_docstring_costs_hidden
"""

EDITS = [('values = r.mget([r.key("{user:%s}" % user_id, c) for c in counters])',
          'pipe = r.pipeline(transaction=False)\n'
          '    for c in counters:\n'
          '        pipe.get(r.key("{user:%s}" % user_id, c))\n'
          '    values = pipe.execute()')]
