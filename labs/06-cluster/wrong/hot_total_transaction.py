"""hot_total reads the shards in one MULTI/EXEC, which a cluster refuses across slots (CROSSSLOT)."""


def hot_total(r, name: str, shards: int = SHARDS) -> int:
    """The exact value of the hot counter ``name``: the sum of its ``shards`` sub-keys (a missing
    shard counts as 0).

    The shards are in different slots, so one MGET on all of them is a CROSSSLOT error on a
    cluster: GET each shard in one pipeline without a transaction (on a cluster the client sends
    one batch to each primary).

    Cost: ``shards`` GETs, O(shards), one round trip per node.
    """
    reads = r.pipeline(transaction=True)
    for shard in range(shards):
        reads.get(r.key("hot", name, shard))
    return sum(int(count) for count in reads.execute() if count is not None)
