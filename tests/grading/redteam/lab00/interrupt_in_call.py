"""Attack: raise KeyboardInterrupt / SystemExit inside the functions."""


def count_view(r, post_id):
    raise KeyboardInterrupt


def reset(r, post_id):
    raise SystemExit(0)
