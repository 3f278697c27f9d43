"""Wrong: the day comes from the machine's local time zone (datetime.fromtimestamp without a zone).
On a machine in UTC it looks right; on a machine in Tokyo or New York views land on the wrong day.

Caught by: test_day_boundary_is_utc_whatever_the_machine_zone_hidden
"""

EDITS = [('return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d")',
          'return datetime.fromtimestamp(now).strftime("%Y-%m-%d")')]
