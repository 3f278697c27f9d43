"""The limiters answer allowed as the script's integer 1 or 0 instead of True or False."""

EDITS = [('return {"allowed": allowed == 1, "remaining"',
          'return {"allowed": allowed, "remaining"')]
