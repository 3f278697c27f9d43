"""Wrong: guarded answers by its policy for every ConnectionError, a refused password included, so a wrong password fails open for ever without a word.

Caught by: test_a_wrong_password_is_raised_not_answered_by_the_policy
"""

EDITS = [("        if not no_answer(exc):\n            raise\n        if int(cooldown_ms):",
          "        if not isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):\n"
          "            raise\n        if int(cooldown_ms):")]
