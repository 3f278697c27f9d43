"""Wrong: view_count reads with INCRBY key 0 so it always gets an int back, which creates the key.

Caught by: test_view_count_reads_without_creating
"""


def _views_key(r, post_id):
    return r.key("views", "post", post_id)


def view_count(r, post_id: int) -> int:
    return r.incrby(_views_key(r, post_id), 0)
