"""Wrong: acquire counts the live holders in one round trip and adds itself in another, so processes that count at the same moment all get in.

Caught by: test_never_more_than_limit_holders_from_eight_processes, test_random_call_sequences_follow_the_contract_hidden
"""


def acquire(r, name, holder, limit, lease_ms):
    if int(limit) < 1 or int(lease_ms) < 1:
        raise ValueError("limit and lease_ms must be at least 1")
    key = r.key("sem", name)
    sec, usec = r.time()
    now = sec * 1000 + usec // 1000
    with r.pipeline() as tx:
        tx.zremrangebyscore(key, "-inf", now)
        tx.zcard(key)
        _, held = tx.execute()
    if held >= int(limit):
        return False
    r.zadd(key, {holder: now + int(lease_ms)})
    if r.pttl(key) < int(lease_ms):
        r.pexpire(key, int(lease_ms))
    return True
