"""release counts a lease whose score equals the server's now as still live, and answers True for it.

Caught by: test_a_lease_has_ended_at_the_millisecond_of_its_score
"""

EDITS = [("if score and tonumber(score) > now then return 1 end", "if score and tonumber(score) >= now then return 1 end")]
