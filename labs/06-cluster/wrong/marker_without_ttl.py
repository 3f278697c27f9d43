"""Wrong: the request markers never expire.

Idempotency works, but every request id ever seen stays in Redis for ever: memory grows without
bound.  A marker only has to outlive the client's retries.
"""


def hot_total(r, name: str, shards: int = SHARDS) -> int:
    """The exact value of the hot counter ``name``: the sum of its ``shards`` sub-keys (a missing
    shard counts as 0).

    The shards are in different slots, so one MGET on all of them is a CROSSSLOT error on a
    cluster: GET each shard in one pipeline without a transaction (on a cluster the client sends
    one batch to each primary).

    Cost: ``shards`` GETs, O(shards), one round trip per node.
    """
    pipe = r.pipeline(transaction=False)
    for i in range(shards):
        pipe.get(r.key("hot", name, i))
    return sum(int(v) for v in pipe.execute() if v is not None)


INCR_ONCE_LUA = """
-- KEYS[1]: the counter; KEYS[2]: the marker of this request id (same hash tag, same slot)
local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)          -- a retry: the value the first attempt produced
end
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], value)
return value
"""
