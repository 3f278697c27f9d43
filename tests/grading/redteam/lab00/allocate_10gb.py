"""Attack: allocate 10 GB."""


def count_view(r, post_id):
    blob = bytearray(10 * 2**30)
    return len(blob)


def reset(r, post_id):
    return len([0] * (10**10))
