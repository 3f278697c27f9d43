"""Wrong: acquire never drops the leases that ended, so a holder that crashed without releasing keeps its slot for ever.

Caught by: test_an_ended_lease_frees_its_slot
"""

EDITS = [("    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n", "")]
