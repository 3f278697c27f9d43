"""The limiters answer allowed as the script's integer 1 or 0 instead of True or False.

Caught by: test_result_is_a_dict_with_three_fields
"""

EDITS = [('return {"allowed": allowed == 1, "remaining"',
          'return {"allowed": allowed, "remaining"')]
