"""Wrong: incr_once ignores the request id.

A client that retries after a timeout sends the same increment again, and INCRBY counts it again:
the counter ends higher than the number of requests, and the two attempts get different answers.
"""


def incr_once(r, name: str, request_id: str, by: int = 1, ttl_s: int = 3600) -> int:
    """Add ``by`` to the counter ``name`` once per ``request_id``, however often the call is retried.

    Keys: the counter ``counter:{<name>}`` and one marker per request,
    ``counter:{<name>}:req:<request_id>``, which expires after ``ttl_s`` seconds.  Both carry the
    hash tag ``{<name>}``: one slot, so one script may use both.  The first call for a request id
    increments and records the new value in the marker; a retry (the same request id again, even
    at the same moment from another process) increments nothing and returns the recorded value.
    Return the counter's value right after this request's increment.

    Cost: one EVAL (GET; INCRBY + SET EX only the first time), O(1), one round trip, atomic.
    """
    counter = r.key("counter", "{%s}" % name)
    marker = r.key("counter", "{%s}" % name, "req", request_id)
    return r.incrby(counter, by)
