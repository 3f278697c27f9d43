"""flush keeps each customer's units as the strings HGETALL returned instead of converting them to integers.

Caught by: test_flush_moves_every_customer_to_sql
"""

EDITS = [("units = {flat[i]: int(flat[i + 1]) for i in range(0, len(flat), 2)}",
          "units = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}")]
