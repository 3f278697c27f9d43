"""hot_total reads every shard with one MGET, which a cluster refuses across slots (CROSSSLOT).

Caught by: test_hot_counter_counts_every_hit
"""


def hot_total(r, name: str, shards: int = SHARDS) -> int:
    """The exact value of the hot counter ``name``: the sum of its ``shards`` sub-keys (a missing
    shard counts as 0).

    The shards are in different slots, so one MGET on all of them is a CROSSSLOT error on a
    cluster: GET each shard in one pipeline without a transaction (on a cluster the client sends
    one batch to each primary).

    Cost: ``shards`` GETs, O(shards), one round trip per node.
    """
    values = r.mget([r.key("hot", name, shard) for shard in range(shards)])
    return sum(int(v or 0) for v in values)
