"""Attack: sys.exit(0) at import."""

import sys

sys.exit(0)


def count_view(r, post_id):
    return 1


def reset(r, post_id):
    return 0
