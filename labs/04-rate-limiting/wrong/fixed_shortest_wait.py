"""Wrong: the fixed window answers the shortest wait among the limits that say no, not the longest.

Caught by: test_random_request_sequences_follow_the_contract_hidden
"""

EDITS = [("if used + cost > cap and till_next > wait then wait = till_next end",
          "if used + cost > cap and (wait == 0 or till_next < wait) then wait = till_next end")]
