"""Wrong: take_views reads with GET and then resets with SET key 0 as a second command.

Caught by: test_take_views_loses_nothing_under_load_hidden
"""


def _views_key(r, post_id):
    return r.key("views", "post", post_id)


def take_views(r, post_id: int) -> int:
    key = _views_key(r, post_id)
    value = r.get(key)
    r.set(key, 0)
    return int(value) if value is not None else 0
