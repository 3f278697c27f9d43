"""Wrong: the sliding log sets its TTL with PEXPIRE ... NX, so later requests never extend it.

Caught by: test_ttls_follow_the_servers_clock_hidden
"""

EDITS = [("redis.call('PEXPIRE', KEYS[1], longest + slack)",
          "redis.call('PEXPIRE', KEYS[1], longest + slack, 'NX')")]
