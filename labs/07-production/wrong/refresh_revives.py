"""Wrong: refresh moves the end of any lease it finds, so a holder whose lease ended gets its slot back over whoever took it meanwhile.

Caught by: test_refresh_extends_a_live_lease_and_never_revives_an_ended_one
"""

EDITS = [("    if not score or tonumber(score) <= now then return 0 end\n", "    if not score then return 0 end\n")]
