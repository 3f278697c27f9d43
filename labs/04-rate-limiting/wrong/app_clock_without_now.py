"""Wrong: without now_ms the limiters read time.time() in Python instead of the server's TIME.

Caught by: test_ttls_follow_the_servers_clock_hidden
"""

import time

EDITS = [('now = "" if now_ms is None else int(now_ms)',
          "now = int(time.time() * 1000) if now_ms is None else int(now_ms)  # the application's clock")]
