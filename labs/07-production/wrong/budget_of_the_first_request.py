"""The budget client is made with the first request's budget and no deadline is set: later requests wait as long as the first could.

Caught by: test_each_request_is_held_to_its_own_budget_hidden
"""

EDITS = [("        kept = _FAST[id(r)] = (r, budget_client(r, MAX_WAIT_MS))",
          "        kept = _FAST[id(r)] = (r, budget_client(r, int(budget_ms)))"),
         ("        with deadline(int(budget_ms)):\n            answer = call(kept[1])",
          "        answer = call(kept[1])")]
