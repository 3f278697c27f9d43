"""With cooldown_ms 0 the guard still opens a breaker of 10 s after no answer.

Caught by: test_after_the_pause_the_limiter_decides_again
"""

EDITS = [("""        if int(cooldown_ms):
            breaker["open_until"] = time.monotonic() + int(cooldown_ms) / 1000""",
          """        breaker["open_until"] = time.monotonic() + (int(cooldown_ms) or 10_000) / 1000""")]
