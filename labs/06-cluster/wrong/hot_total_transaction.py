"""hot_total reads the shards in one MULTI/EXEC, which a cluster refuses across slots (CROSSSLOT)."""

EDITS = [('reads = r.pipeline(transaction=False)',
          'reads = r.pipeline(transaction=True)')]
