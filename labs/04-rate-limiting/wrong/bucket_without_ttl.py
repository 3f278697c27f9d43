"""The token bucket's hash is written without a TTL."""

EDITS = [("    redis.call('PEXPIRE', KEYS[1], refilled + slack)\n", "")]
