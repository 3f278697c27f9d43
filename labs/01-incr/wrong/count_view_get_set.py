"""Wrong: count_view reads the counter with GET and writes GET+1 back with SET.

Caught by: test_a_view_counted_between_two_requests_is_not_lost_hidden, test_views_from_many_processes_add_up
"""


def _views_key(r, post_id):
    return r.key("views", "post", post_id)


def count_view(r, post_id: int) -> int:
    key = _views_key(r, post_id)
    current = int(r.get(key) or 0)
    r.set(key, current + 1)
    return current + 1
