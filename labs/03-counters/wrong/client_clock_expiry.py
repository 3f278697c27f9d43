"""record_view sets the expiry with PEXPIREAT from the application's clock, so keys expire early or
late when that clock is off.

Caught by: test_ttl_is_on_the_servers_clock_whatever_the_machines_clock_hidden
"""

import time

EDITS = [('        p.pexpire(counter, ttl_ms, nx=True)\n',
          '        p.pexpireat(counter, int(time.time() * 1000) + ttl_ms, nx=True)\n'),
         ('        p.pexpire(top, ttl_ms, nx=True)\n',
          '        p.pexpireat(top, int(time.time() * 1000) + ttl_ms, nx=True)\n')]
