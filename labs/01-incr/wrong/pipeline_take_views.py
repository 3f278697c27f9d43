"""take_views sends GET and SET 0 in one pipeline without MULTI, which Redis does not run as one step."""


def take_views(r, post_id):
    key = r.key("views", "post", post_id)
    with r.pipeline(transaction=False) as pipe:
        pipe.get(key)
        pipe.set(key, 0)
        value, _ = pipe.execute()
    return int(value) if value is not None else 0
