"""Wrong: PEXPIRE on every view (no NX). Atomic, and every key has a TTL, but each view restarts
the TTL: under steady traffic the keys never expire and a short window never closes.

Caught by: test_later_views_do_not_extend_the_ttl_hidden
"""

EDITS = [('        p.pexpire(counter, ttl_ms, nx=True)\n',
          '        p.pexpire(counter, ttl_ms)\n'),
         ('        p.pexpire(top, ttl_ms, nx=True)\n',
          '        p.pexpire(top, ttl_ms)\n')]
