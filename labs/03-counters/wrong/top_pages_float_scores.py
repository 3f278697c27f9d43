"""Wrong: top_pages returns the WITHSCORES pairs as they come, with float views such as 2.0.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


def top_pages(r, now: float, n: int = 3) -> list:
    if n <= 0:
        return []
    rows = r.zrevrange(r.key("top", day_of(r, now)), 0, n - 1, withscores=True)
    return [[page, score] for page, score in rows]
