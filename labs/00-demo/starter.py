"""Lab 00 (demo): count page views with one Redis command each.

Every function takes the Redis client ``r`` first.  Build key names with ``r.key(...)``:
``r.key("views", "post", 17)`` is the key ``views:post:17`` under your run's prefix.
"""


def count_view(r, post_id: int) -> int:
    """Count one view of post ``post_id`` and return the new number of views.

    Use INCR on the key ``views:post:<post_id>``: O(1), atomic, and a missing key counts as 0,
    so many processes can count at once without losing a view.
    """
    raise NotImplementedError("count_view: your code here")


def reset(r, post_id: int) -> int:
    """Reset post ``post_id``'s counter: delete the key and return the views it had (0 if none).

    Use GETDEL (Redis 6.2+): O(1), reads and deletes in one atomic step, so a view counted at the
    same moment is either in the returned number or in the new counter, never lost.
    """
    raise NotImplementedError("reset: your code here")
