"""Wrong: the 60,000 ms of slack is added on the server's clock too, so a key lives a minute longer
than the longest window when now_ms is None.

Caught by: test_ttls_follow_the_servers_clock_hidden
"""

EDITS = [("  now, slack = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), 0\n",
          "  now, slack = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), 60000\n")]
