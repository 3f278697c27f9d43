"""Wrong: take_views returns GETDEL's reply as it comes (a str), falling back to 0 only for a missing key.

Caught by: test_take_views_returns_count_and_restarts
"""


def _views_key(r, post_id):
    return r.key("views", "post", post_id)


def take_views(r, post_id: int) -> int:
    return r.getdel(_views_key(r, post_id)) or 0
