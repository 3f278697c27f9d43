"""Attack: sys.exit(0) / os._exit(0) inside the functions (a 'successful' exit instead of an answer)."""

import os
import sys


def count_view(r, post_id):
    sys.exit(0)


def reset(r, post_id):
    os._exit(0)
