"""Wrong: release gives back a slot without checking whose it is (ZPOPMIN, as DECR would), so anyone's release frees the oldest holder's slot.

Caught by: test_only_the_holder_can_release_its_slot
"""


def release(r, name, holder):
    return bool(r.zpopmin(r.key("sem", name)))
