"""Attack: a syntax error."""

def count_view(r, post_id)
    return r.incr(r.key("views", "post", post_id))
