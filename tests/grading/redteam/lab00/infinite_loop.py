"""Attack: spin for ever (CPU)."""


def count_view(r, post_id):
    while True:
        pass


reset = count_view
