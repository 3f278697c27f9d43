"""The token bucket's hash is written without a TTL.

Caught by: test_every_key_has_a_ttl_hidden
"""

EDITS = [("    redis.call('PEXPIRE', KEYS[1], refilled + slack)\n", "")]
