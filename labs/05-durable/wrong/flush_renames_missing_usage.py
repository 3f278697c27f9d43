"""flush renames the usage hash without checking that it exists, so a flush with nothing counted fails.

Caught by: test_flush_moves_every_customer_to_sql
"""

EDITS = [("      if redis.call('EXISTS', live) == 0 then return false end\n", "")]
