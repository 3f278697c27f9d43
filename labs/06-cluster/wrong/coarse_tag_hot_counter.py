"""Wrong: the shards of a hot counter share a hash tag.

hot:{<name>}:<i> looks sharded, and one MGET can read them all, but the tag puts every shard into
the same slot: one primary still takes all the traffic.  A tag that is too coarse makes a hot slot.
"""


def incr_hot(r, name: str, shards: int = SHARDS) -> None:
    """Count one hit on the hot counter ``name``, split into ``shards`` sub-keys.

    Keys: ``hot:<name>:<i>`` for ``i`` in ``0 .. shards-1``, *without* a hash tag, so the shards
    land in different slots and, on a cluster, on different primaries: the traffic of one hot
    counter is spread over the whole cluster instead of hitting one key on one node.  Each call
    INCRs one shard chosen at random.  Return None.

    Cost: one INCR, O(1), one round trip.
    """
    r.incr(r.key("hot", "{%s}" % name, random.randrange(shards)))


def hot_total(r, name: str, shards: int = SHARDS) -> int:
    """The exact value of the hot counter ``name``: the sum of its ``shards`` sub-keys (a missing
    shard counts as 0).

    The shards are in different slots, so one MGET on all of them is a CROSSSLOT error on a
    cluster: GET each shard in one pipeline without a transaction (on a cluster the client sends
    one batch to each primary).

    Cost: ``shards`` GETs, O(shards), one round trip per node.
    """
    values = r.mget([r.key("hot", "{%s}" % name, i) for i in range(shards)])
    return sum(int(v) for v in values if v is not None)
