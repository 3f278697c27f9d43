"""Wrong: guarded answers by its policy for any exception, so fail-open also admits every request that a bug or a WRONGTYPE error breaks.

Caught by: test_a_bug_is_raised_not_admitted
"""

EDITS = [("    except redis.exceptions.RedisError as exc:\n        if not no_answer(exc):\n            raise\n",
          "    except Exception:\n")]
