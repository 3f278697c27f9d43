"""hot_total reads the shards in one MULTI/EXEC, which a cluster refuses across slots (CROSSSLOT).

Caught by: test_hot_counter_counts_every_hit
"""

EDITS = [('reads = r.pipeline(transaction=False)',
          'reads = r.pipeline(transaction=True)')]
