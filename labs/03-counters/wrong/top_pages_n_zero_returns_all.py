"""Wrong: top_pages passes 0 .. n-1 to ZREVRANGE without a guard, so n=0 becomes 0 .. -1: every page.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""


def top_pages(r, now: float, n: int = 3) -> list:
    rows = r.zrevrange(r.key("top", day_of(r, now)), 0, n - 1, withscores=True)
    return [[page, int(score)] for page, score in rows]
