"""Wrong: a user's counters have no hash tag.

user:17:views and user:17:likes hash to different slots.  On one server MGET reads them together;
on a cluster the same MGET fails with CROSSSLOT.

Caught by: test_user_counters_are_read_together
"""

EDITS = [('return r.incrby(r.key("{user:%s}" % user_id, counter), by)',
          'return r.incrby(r.key("user", user_id, counter), by)'),
         ('values = r.mget([r.key("{user:%s}" % user_id, c) for c in counters])',
          'values = r.mget([r.key("user", user_id, c) for c in counters])')]
