"""Wrong: the sliding log's TTL is the sum of every limit's window, longer than the longest window.

Caught by: test_random_request_sequences_follow_the_contract_hidden
"""

EDITS = [("    redis.call('PEXPIRE', KEYS[1], longest + slack)",
          "    local total = 0\n"
          "    for _, pair in ipairs(limits) do total = total + pair[2] end\n"
          "    redis.call('PEXPIRE', KEYS[1], total + slack)")]
