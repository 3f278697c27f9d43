"""Wrong: the request marker of incr_once has no hash tag, so its script uses keys of two slots.

counter:{page}:req:r1 carries the counter's tag; counter:page:req:r1 does not: on one server the
script runs, on a cluster it fails with CROSSSLOT.

Caught by: test_a_retried_increment_counts_once
"""

EDITS = [('marker = r.key("counter", "{%s}" % name, "req", request_id)',
          'marker = r.key("counter", name, "req", request_id)')]
