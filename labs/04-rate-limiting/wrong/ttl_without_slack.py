"""Wrong: under a controlled clock the fixed window's TTL has no slack, so the key expires on the real clock."""

EDITS = [("redis.call('PEXPIRE', KEYS[1], keep + slack)", "redis.call('PEXPIRE', KEYS[1], keep)")]
