"""Wrong: the sliding log's expiry is an instant computed from time.time() in Python (PEXPIREAT).

The application's clock is read before the script is sent and written into it: the key expires
at that instant + the longest window, however much later the script runs and whatever the
server's clock says.

Caught by: test_the_servers_clock_is_read_when_the_script_runs_hidden
"""

import time

EDITS = [("redis.call('PEXPIRE', KEYS[1], longest + slack)",
          "redis.call('PEXPIREAT', KEYS[1], %d + longest + slack)  -- the application's time in ms"),
         ('return _decide(r, script, r.key("rl", "log", client_id)',
          'return _decide(r, script % int(time.time() * 1000), r.key("rl", "log", client_id)')]
