"""Wrong: the hot counter is one key.

Every hit INCRs hot:<name>, so the sum is exact, but the whole traffic of the counter goes to one
key in one slot on one primary: adding nodes to the cluster does not help it at all.

Caught by: test_hot_counter_is_spread_over_the_cluster
"""

EDITS = [('r.incr(r.key("hot", name, random.randrange(shards)))',
          'r.incr(r.key("hot", name))'),
         ('    reads = r.pipeline(transaction=False)\n    for shard in range(shards):\n        reads.get(r.key("hot", name, shard))\n    return sum(int(count) for count in reads.execute() if count is not None)\n',
          '    return int(r.get(r.key("hot", name)) or 0)\n')]
