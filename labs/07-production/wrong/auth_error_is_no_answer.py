"""Wrong: guarded answers by its policy for every ConnectionError, a refused password included, so a wrong password fails open for ever without a word."""

EDITS = [("        if not no_answer(exc):\n            raise\n        if int(cooldown_ms):",
          "        if not isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):\n"
          "            raise\n        if int(cooldown_ms):")]
