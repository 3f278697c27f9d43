"""Wrong: top_pages asks ZREVRANGE for 0..n, which returns n + 1 pages.

Caught by: test_top_pages_most_viewed_first
"""


def top_pages(r, now: float, n: int = 3) -> list:
    if n <= 0:
        return []
    rows = r.zrevrange(r.key("top", day_of(r, now)), 0, n, withscores=True)
    return [[page, int(score)] for page, score in rows]
