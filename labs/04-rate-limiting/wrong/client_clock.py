"""Wrong: every limiter takes the time from the application's clock (time.time()), whatever now_ms says.

The limiters ignore the clock they are given (and never ask Redis for TIME): two application servers
whose clocks disagree split one window in two, and a controlled clock in tests changes nothing.

Caught by: test_fixed_window_allows_the_limit_then_denies
"""

import time

EDITS = [('now = "" if now_ms is None else int(now_ms)',
          "now = int(time.time() * 1000)  # the application server's clock")]
