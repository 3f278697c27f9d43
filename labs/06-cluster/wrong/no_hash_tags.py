"""Wrong: a user's counters have no hash tag.

user:17:views and user:17:likes hash to different slots.  On one server MGET reads them together;
on a cluster the same MGET fails with CROSSSLOT.  The request markers have no tag either, so the
idempotent increment's script uses keys of two slots: CROSSSLOT again.
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


def user_incr(r, user_id: int, counter: str, by: int = 1) -> int:
    """Add ``by`` to the counter ``counter`` (e.g. ``views``, ``likes``) of user ``user_id``; return
    the new value.

    Key: ``{user:<user_id>}:<counter>`` (for example ``{user:17}:views``).  The hash tag
    ``{user:17}`` puts every counter of one user into one slot, so they can be read with one MGET;
    different users are still spread over the cluster.

    Cost: one INCRBY, O(1).
    """
    return r.incrby(r.key("user", user_id, counter), by)


def user_counters(r, user_id: int, counters: list) -> dict:
    """The values of the counters ``counters`` of user ``user_id`` as ``{counter: int}`` (missing
    ones are 0), read together in one command.

    Cost: one MGET on keys of one slot (the hash tag ``{user:<user_id>}``), O(len(counters)).
    """
    if not counters:
        return {}
    values = r.mget([r.key("user", user_id, c) for c in counters])
    return {c: int(v or 0) for c, v in zip(counters, values)}


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
    marker = r.key("req", request_id)
    return int(r.eval(INCR_ONCE_LUA, 2, counter, marker, by, ttl_s))
