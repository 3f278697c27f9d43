"""Wrong: when the sliding log says no, retry_after_ms is when the oldest unit of the window leaves,
however many must leave for the cost to fit: too early when a request needs two or more units of
different times to go.

Caught by: test_sliding_window_lets_entries_leave_exactly_hidden
"""

EDITS = [("        local at = logged + cost - cap - 1\n", "        local at = logged - recent\n")]
