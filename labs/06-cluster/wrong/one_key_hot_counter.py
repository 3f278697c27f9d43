"""Wrong: the hot counter is one key.

Every hit INCRs hot:<name>, so the sum is exact, but the whole traffic of the counter goes to one
key in one slot on one primary: adding nodes to the cluster does not help it at all.
"""


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
