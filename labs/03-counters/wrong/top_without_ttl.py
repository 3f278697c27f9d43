"""Wrong: the counter gets its TTL, the daily ranking (top:<day>) never does: one sorted set
per day stays in memory for ever.
"""

EDITS = [('        p.pexpire(top, ttl_ms, nx=True)\n',
          '')]
