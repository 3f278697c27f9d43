"""Attack: every call sleeps just under the per-call timeout (3 s in the red team's runs), so no
single call times out while the lab's run holds a grading worker for minutes."""

import time


def count_view(r, post_id):
    time.sleep(2.7)
    return -1


def reset(r, post_id):
    time.sleep(2.7)
    return -1
