"""record_view sets the expiry with PEXPIREAT from the application's clock, so keys expire early or
late when that clock is off."""

import time

EDITS = [('        p.pexpire(counter, ttl_ms, nx=True)\n',
          '        p.pexpireat(counter, int(time.time() * 1000) + ttl_ms, nx=True)\n'),
         ('        p.pexpire(top, ttl_ms, nx=True)\n',
          '        p.pexpireat(top, int(time.time() * 1000) + ttl_ms, nx=True)\n')]
