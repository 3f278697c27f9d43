"""Attack: reset is missing, count_view answers wrongly."""


def count_view(r, post_id):
    return 0
