"""Wrong: take_views reads with GET and then deletes with DEL. A view counted between the two commands
is deleted without ever being returned: it is lost.

Caught by: test_take_views_is_one_step_even_when_its_commands_are_sent_apart_hidden, test_take_views_loses_nothing_under_load_hidden
"""


def take_views(r, post_id):
    key = r.key("views", "post", post_id)
    value = r.get(key)
    r.delete(key)
    return int(value) if value is not None else 0
