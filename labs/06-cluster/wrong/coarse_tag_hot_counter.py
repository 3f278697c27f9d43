"""Wrong: the shards of a hot counter share a hash tag.

hot:{<name>}:<i> looks sharded, and one MGET can read them all, but the tag puts every shard into
the same slot: one primary still takes all the traffic.  A tag that is too coarse makes a hot slot.

Caught by: test_hot_counter_is_spread_over_the_cluster
"""

EDITS = [('r.incr(r.key("hot", name, random.randrange(shards)))',
          'r.incr(r.key("hot", "{%s}" % name, random.randrange(shards)))'),
         ('    reads = r.pipeline(transaction=False)\n    for shard in range(shards):\n        reads.get(r.key("hot", name, shard))\n    return sum(int(count) for count in reads.execute() if count is not None)\n',
          '    values = r.mget([r.key("hot", "{%s}" % name, shard) for shard in range(shards)])\n    return sum(int(count) for count in values if count is not None)\n')]
