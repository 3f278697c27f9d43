"""Wrong: reset returns the count but leaves the key in place (GET instead of GETDEL).

Caught by: test_reset_returns_count_and_clears
"""


def reset(r, post_id: int) -> int:
    old = r.get(r.key("views", "post", post_id))
    return int(old) if old is not None else 0
