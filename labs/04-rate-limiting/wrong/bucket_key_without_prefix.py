"""Wrong: the token bucket's key is written by hand, "rl:bucket:<client>", not built with r.key(...),
so it ignores the run's prefix: the key is another program's, and the tests find no state of the client.

Caught by: test_ttls_follow_the_servers_clock_hidden
"""

EDITS = [('r.key("rl", "bucket", client_id)', 'f"rl:bucket:{client_id}"')]
