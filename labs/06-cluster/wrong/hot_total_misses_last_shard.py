"""hot_total sums the shards 0 to shards - 2 and misses the last one."""

EDITS = [('    for shard in range(shards):\n        reads.get(',
          '    for shard in range(shards - 1):\n        reads.get(')]
