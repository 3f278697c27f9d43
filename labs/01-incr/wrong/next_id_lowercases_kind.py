"""Wrong: next_id folds the kind to lower case, so "Order" and "order" share one sequence and ids:Order is never written.

Caught by: test_posts_are_counted_separately_hidden
"""


def next_id(r, kind: str) -> int:
    return r.incr(r.key("ids", kind.lower()))
