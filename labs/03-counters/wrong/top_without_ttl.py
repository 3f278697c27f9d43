"""Wrong: the counter gets its TTL, the daily ranking (top:<day>) never does: one sorted set
per day stays in memory for ever.

Caught by: test_every_key_has_a_ttl
"""

EDITS = [('        p.pexpire(top, ttl_ms, nx=True)\n',
          '')]
