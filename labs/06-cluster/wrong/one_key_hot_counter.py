"""Wrong: the hot counter is one key.

Every hit INCRs hot:<name>, so the sum is exact, but the whole traffic of the counter goes to one
key in one slot on one primary: adding nodes to the cluster does not help it at all.
"""
import random

#: how many shards a hot counter is split into
SHARDS = 16


def incr_hot(r, name: str, shards: int = SHARDS) -> None:
    """Count one hit on the hot counter ``name``, split into ``shards`` sub-keys.

    Keys: ``hot:<name>:<i>`` for ``i`` in ``0 .. shards-1``, *without* a hash tag, so the shards
    land in different slots and, on a cluster, on different primaries: the traffic of one hot
    counter is spread over the whole cluster instead of hitting one key on one node.  Each call
    INCRs one shard chosen at random.  Return None.

    Cost: one INCR, O(1), one round trip.
    """
    r.incr(r.key("hot", name))


def hot_total(r, name: str, shards: int = SHARDS) -> int:
    """The exact value of the hot counter ``name``: the sum of its ``shards`` sub-keys (a missing
    shard counts as 0).

    The shards are in different slots, so one MGET on all of them is a CROSSSLOT error on a
    cluster: GET each shard in one pipeline without a transaction (on a cluster the client sends
    one batch to each primary).

    Cost: ``shards`` GETs, O(shards), one round trip per node.
    """
    return int(r.get(r.key("hot", name)) or 0)


def user_incr(r, user_id: int, counter: str, by: int = 1) -> int:
    """Add ``by`` to the counter ``counter`` (e.g. ``views``, ``likes``) of user ``user_id``; return
    the new value.

    Key: ``{user:<user_id>}:<counter>`` (for example ``{user:17}:views``).  The hash tag
    ``{user:17}`` puts every counter of one user into one slot, so they can be read with one MGET;
    different users are still spread over the cluster.

    Cost: one INCRBY, O(1).
    """
    return r.incrby(r.key("{user:%s}" % user_id, counter), by)


def user_counters(r, user_id: int, counters: list) -> dict:
    """The values of the counters ``counters`` of user ``user_id`` as ``{counter: int}`` (missing
    ones are 0), read together in one command.

    Cost: one MGET on keys of one slot (the hash tag ``{user:<user_id>}``), O(len(counters)).
    """
    if not counters:
        return {}
    values = r.mget([r.key("{user:%s}" % user_id, c) for c in counters])
    return {c: int(v or 0) for c, v in zip(counters, values)}


INCR_ONCE_LUA = """
-- KEYS[1]: the counter; KEYS[2]: the marker of this request id (same hash tag, same slot)
local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)          -- a retry: the value the first attempt produced
end
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], value, 'EX', ARGV[2])
return value
"""


def incr_once(r, name: str, request_id: str, by: int = 1, ttl_s: int = 3600) -> int:
    """Add ``by`` to the counter ``name`` once per ``request_id``, however often the call is retried.

    Keys: the counter ``counter:{<name>}`` and one marker per request,
    ``counter:{<name>}:req:<request_id>``, which expires after ``ttl_s`` seconds.  Both carry the
    hash tag ``{<name>}``: one slot, so one script may use both.  The first call for a request id
    increments and records the new value in the marker; a retry (the same request id again, even
    at the same moment from another process) increments nothing and returns the recorded value.
    Return the counter's value right after this request's increment.

    Cost: one EVAL (GET; INCRBY + SET EX only the first time), O(1), one round trip, atomic.
    """
    counter = r.key("counter", "{%s}" % name)
    marker = r.key("counter", "{%s}" % name, "req", request_id)
    return int(r.eval(INCR_ONCE_LUA, 2, counter, marker, by, ttl_s))
