"""Wrong: release gives back a slot without checking whose it is (ZPOPMIN, as DECR would), so anyone's release frees the oldest holder's slot."""


def release(r, name, holder):
    return bool(r.zpopmin(r.key("sem", name)))
