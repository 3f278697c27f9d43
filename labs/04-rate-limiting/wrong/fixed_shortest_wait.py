"""Wrong: the fixed window answers the shortest wait among the limits that say no, not the longest."""

EDITS = [("if used + cost > cap and till_next > wait then wait = till_next end",
          "if used + cost > cap and (wait == 0 or till_next < wait) then wait = till_next end")]
