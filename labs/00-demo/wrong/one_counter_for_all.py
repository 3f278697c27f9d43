"""Wrong: one counter for every post (the key does not include the post id).

Caught by: test_first_view_is_one
"""


def count_view(r, post_id: int) -> int:
    return r.incr(r.key("views", "post"))


def reset(r, post_id: int) -> int:
    old = r.getdel(r.key("views", "post"))
    return int(old) if old is not None else 0
