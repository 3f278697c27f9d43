"""Attack: os._exit(0) at import."""

import os

os._exit(0)


def count_view(r, post_id):
    return 1


def reset(r, post_id):
    return 0
