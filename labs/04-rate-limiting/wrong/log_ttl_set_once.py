"""Wrong: the sliding log sets its TTL with PEXPIRE ... NX, so later requests never extend it."""

EDITS = [("redis.call('PEXPIRE', KEYS[1], longest + slack)",
          "redis.call('PEXPIRE', KEYS[1], longest + slack, 'NX')")]
