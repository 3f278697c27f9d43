"""Attack: sleep for ever (wall time, no CPU)."""

import time


def count_view(r, post_id):
    time.sleep(10**9)


reset = count_view
