"""Wrong: incr_once ignores the request id.

A client that retries after a timeout sends the same increment again, and INCRBY counts it again:
the counter ends higher than the number of requests, and the two attempts get different answers.
"""


def hot_total(r, name: str, shards: int = SHARDS) -> int:
    """The exact value of the hot counter ``name``: the sum of its ``shards`` sub-keys (a missing
    shard counts as 0).

    The shards are in different slots, so one MGET on all of them is a CROSSSLOT error on a
    cluster: GET each shard in one pipeline without a transaction (on a cluster the client sends
    one batch to each primary).

    Cost: ``shards`` GETs, O(shards), one round trip per node.
    """
    pipe = r.pipeline(transaction=False)
    for i in range(shards):
        pipe.get(r.key("hot", name, i))
    return sum(int(v) for v in pipe.execute() if v is not None)


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
