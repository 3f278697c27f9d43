"""Wrong: a denied sliding-window request reports remaining 0, where the contract says it is what was
already left (more than 0 when the request asked for more than that).

Caught by: test_sliding_window_lets_entries_leave_exactly_hidden
"""

EDITS = [("    if wait > 0 then return {0, fits, wait} end\n    for first = 1, cost, 1000 do\n",
          "    if wait > 0 then return {0, 0, wait} end\n    for first = 1, cost, 1000 do\n")]
