"""record_view gives the TTL in whole seconds (ttl_ms // 1000), so 1500 ms becomes 1 s and 700 ms 0 s.

Caught by: test_the_ttl_is_exact_to_the_millisecond_hidden
"""

EDITS = [('        p.pexpire(counter, ttl_ms, nx=True)\n',
          '        p.expire(counter, ttl_ms // 1000, nx=True)\n'),
         ('        p.pexpire(top, ttl_ms, nx=True)\n',
          '        p.expire(top, ttl_ms // 1000, nx=True)\n')]
