"""Wrong: read-modify-write. count_view and next_id GET the value, add 1 in Python and SET it back,
so processes that read the same value overwrite each other: views are lost and ids handed out twice.

Caught by: test_a_view_counted_between_two_requests_is_not_lost_hidden, test_views_from_many_processes_add_up
"""


def count_view(r, post_id):
    key = r.key("views", "post", post_id)
    value = int(r.get(key) or 0) + 1
    r.set(key, value)
    return value


def next_id(r, kind):
    key = r.key("ids", kind)
    value = int(r.get(key) or 0) + 1
    r.set(key, value)
    return value
