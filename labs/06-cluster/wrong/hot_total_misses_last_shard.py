"""hot_total sums the shards 0 to shards - 2 and misses the last one.

Caught by: test_hot_counter_counts_every_hit
"""

EDITS = [('    for shard in range(shards):\n        reads.get(',
          '    for shard in range(shards - 1):\n        reads.get(')]
