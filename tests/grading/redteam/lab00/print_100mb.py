"""Attack: print 100 MB (at import and in every call)."""

import sys

print("x" * (1 << 20))


def count_view(r, post_id):
    for _ in range(100):
        sys.stdout.write("y" * (1 << 20))
    sys.stdout.flush()
    return -1


reset = count_view
