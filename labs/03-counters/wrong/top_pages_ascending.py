"""Wrong: top_pages uses ZRANGE instead of ZREVRANGE, so the least viewed pages come first.

Caught by: test_top_pages_most_viewed_first
"""


def top_pages(r, now: float, n: int = 3) -> list:
    if n <= 0:
        return []
    rows = r.zrange(r.key("top", day_of(r, now)), 0, n - 1, withscores=True)
    return [[page, int(score)] for page, score in rows]
