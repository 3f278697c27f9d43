"""take_views sends GET and SET 0 in one pipeline without MULTI, which Redis does not run as one step.

Caught by: test_take_views_is_one_step_even_when_its_commands_are_sent_apart_hidden, test_take_views_loses_nothing_under_load_hidden
"""


def take_views(r, post_id):
    key = r.key("views", "post", post_id)
    with r.pipeline(transaction=False) as pipe:
        pipe.get(key)
        pipe.set(key, 0)
        value, _ = pipe.execute()
    return int(value) if value is not None else 0
