"""Wrong: deposit refuses cents >= 2**63 - 1 instead of cents > 2**63 - 1, so depositing exactly
9223372036854775807 cents into an empty account raises OverflowError, where a balance of exactly
2**63 - 1 is allowed.

Caught by: test_deposit_refuses_overflow_hidden
"""

EDITS = [("    if cents > MAX_INT64:\n", "    if cents >= MAX_INT64:\n")]
