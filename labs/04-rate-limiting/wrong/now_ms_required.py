"""The limiters convert now_ms with int() and fail when it is None instead of reading the server's clock.

Caught by: test_every_key_has_a_ttl_hidden
"""

EDITS = [('now = "" if now_ms is None else int(now_ms)', "now = int(now_ms)")]
