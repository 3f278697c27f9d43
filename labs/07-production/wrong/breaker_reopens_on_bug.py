"""A probe after the cooldown that raises a bug opens the breaker for another cooldown before it is raised.

Caught by: test_a_probe_that_raises_does_not_leave_the_breaker_open
"""

EDITS = [("""    except redis.exceptions.RedisError as exc:
        if not no_answer(exc):
            raise""", """    except Exception as exc:
        if not no_answer(exc):
            if int(cooldown_ms) and breaker["open_until"]:
                breaker["open_until"] = time.monotonic() + int(cooldown_ms) / 1000
            raise""")]
