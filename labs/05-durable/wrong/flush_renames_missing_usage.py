"""flush renames the usage hash without checking that it exists, so a flush with nothing counted fails."""

EDITS = [("      if redis.call('EXISTS', live) == 0 then return false end\n", "")]
