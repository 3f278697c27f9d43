"""Wrong: the token bucket refills whole tokens only and still moves its time to now, so the part of
a token already earned is lost on every request.

Caught by: test_token_bucket_refills_continuously_hidden
"""

EDITS = [("      level[i] = math.min(cap * span, stored + since * cap)\n",
          "      level[i] = math.min(cap * span, stored + math.floor(since * cap / span) * span)\n")]
