"""Wrong: the token bucket rounds the wait for missing tokens down to a whole ms (at least 1), not up.

Caught by: test_random_request_sequences_follow_the_contract_hidden
"""

EDITS = [("if short > 0 then wait = math.max(wait, math.ceil(short / cap)) end",
          "if short > 0 then wait = math.max(wait, math.max(1, math.floor(short / cap))) end")]
