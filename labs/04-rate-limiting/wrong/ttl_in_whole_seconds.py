"""Wrong: the token bucket's TTL is set with EXPIRE in whole seconds, rounded up.

Caught by: test_ttls_under_a_controlled_clock_have_the_slack_hidden
"""

EDITS = [("redis.call('PEXPIRE', KEYS[1], refilled + slack)",
          "redis.call('EXPIRE', KEYS[1], math.ceil((refilled + slack) / 1000))")]
