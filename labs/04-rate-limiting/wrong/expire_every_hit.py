"""Wrong: EXPIRE on every hit: the fixed window ends when its key expires, and every hit pushes that back.

fixed_window counts on whatever window the count was made in, until the key expires, and gives the
key a whole window_ms (the longest) again on every allowed request: a client that keeps sending is
never given a new window.

Caught by: test_every_limit_must_allow
"""

EDITS = [("local used = (tonumber(got[2 * i - 1]) == k) and tonumber(got[2 * i]) or 0",
          "local used = tonumber(got[2 * i]) or 0"),
         ("if till_next > keep then keep = till_next end", "if span > keep then keep = span end")]
