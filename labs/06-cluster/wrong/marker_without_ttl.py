"""Wrong: the request markers never expire.

Idempotency works, but every request id ever seen stays in Redis for ever: memory grows without
bound.  A marker only has to outlive the client's retries.

Caught by: test_a_retried_increment_counts_once
"""

EDITS = [("redis.call('SET', KEYS[2], value, 'EX', ARGV[2])", "redis.call('SET', KEYS[2], value)")]
