"""Wrong: the fixed window still holds the millisecond k * window_ms, its next window's first, so a
request at the edge is counted in the window that just ended.

Caught by: test_fixed_window_boundaries_hidden
"""

EDITS = [("      local start = now - now % span\n", "      local start = now - (now - 1) % span - 1\n")]
