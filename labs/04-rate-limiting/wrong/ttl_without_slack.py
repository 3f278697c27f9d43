"""Wrong: under a controlled clock the fixed window's TTL has no slack, so the key expires on the real clock.

Caught by: test_ttls_under_a_controlled_clock_have_the_slack_hidden
"""

EDITS = [("redis.call('PEXPIRE', KEYS[1], keep + slack)", "redis.call('PEXPIRE', KEYS[1], keep)")]
