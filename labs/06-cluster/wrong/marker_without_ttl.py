"""Wrong: the request markers never expire.

Idempotency works, but every request id ever seen stays in Redis for ever: memory grows without
bound.  A marker only has to outlive the client's retries.
"""

EDITS = [("redis.call('SET', KEYS[2], value, 'EX', ARGV[2])", "redis.call('SET', KEYS[2], value)")]
