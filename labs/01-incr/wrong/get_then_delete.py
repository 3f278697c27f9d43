"""Wrong: take_views reads with GET and then deletes with DEL. A view counted between the two commands
is deleted without ever being returned: it is lost."""


def take_views(r, post_id):
    key = r.key("views", "post", post_id)
    value = r.get(key)
    r.delete(key)
    return int(value) if value is not None else 0
