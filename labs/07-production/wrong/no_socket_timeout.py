"""Wrong: guarded calls Redis on the ordinary client, whose socket timeout is far longer than the budget, so a paused server holds every request.

Caught by: test_a_paused_server_costs_the_budget_and_the_policy_answers
"""

EDITS = [("            answer = call(kept[1])\n", "            answer = call(r)\n")]
