"""Wrong: refresh moves the end of any lease it finds, so a holder whose lease ended gets its slot back over whoever took it meanwhile."""


def refresh(r, name, holder, lease_ms):
    sec, usec = r.time()
    now = sec * 1000 + usec // 1000
    return r.zadd(r.key("sem", name), {holder: now + int(lease_ms)}, xx=True, ch=True) == 1
