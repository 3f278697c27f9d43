"""Wrong: acquire never drops the leases that ended, so a holder that crashed without releasing keeps its slot for ever."""

EDITS = [("    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n", "")]
