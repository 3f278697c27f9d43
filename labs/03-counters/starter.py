"""Lab 03: a daily view counter whose windows close on time and whose keys always expire.

Every function takes the Redis client ``r`` first and the time ``now`` explicitly (Unix seconds,
a float).  Days are **UTC** days: a view at 23:30 in New York on 1 May is counted on 2 May.  Never
read the machine's clock or time zone.

Keys, built with ``r.key(...)`` (the client's prefix is added for you):

* ``views:<page>:<YYYY-MM-DD>`` — a string counter: the views of ``page`` on that UTC day;
* ``top:<YYYY-MM-DD>`` — a sorted set: member ``page``, score its views on that UTC day.

Both keys get a TTL of ``ttl_ms`` milliseconds when they are created, and nothing ever extends it:
the date in the name closes the day, the TTL only collects old days.  No key may ever exist
without a TTL, even if the process dies between two commands.
"""

RETENTION_MS = 8 * 24 * 3600 * 1000  # eight days: the last 7 days stay readable


def day_of(r, now: float) -> str:
    """The UTC date of the Unix time ``now``, as ``YYYY-MM-DD``.  No Redis command."""
    raise NotImplementedError("day_of: your code here")


def record_view(r, page: str, now: float, ttl_ms: int = RETENTION_MS) -> int:
    """Count one view of ``page`` at time ``now``; return that page's views on that UTC day.

    Increment ``views:<page>:<day>`` and the score of ``page`` in ``top:<day>``.  Give each key the
    TTL ``ttl_ms`` when it is created and never extend it (``PEXPIRE key ttl NX`` sets a TTL only on
    a key that has none).  ``ttl_ms`` is in milliseconds: PEXPIRE takes it as it is (EXPIRE with
    ``ttl_ms // 1000`` cuts it), and Redis counts it on its own clock.  Send everything in **one
    round trip** that Redis runs as one unit: a MULTI/EXEC transaction
    (``r.pipeline(transaction=True)``) or a Lua script; a pipeline without MULTI is not one unit.
    Then a crash cannot leave a key without a TTL, and concurrent views are never lost.
    Cost: INCR, ZINCRBY (O(log N) in the number of pages that day) and two PEXPIRE, one round trip.
    """
    raise NotImplementedError("record_view: your code here")


def views_today(r, page: str, now: float) -> int:
    """The views of ``page`` on the UTC day of ``now`` (0 if none).  GET: O(1), creates nothing."""
    raise NotImplementedError("views_today: your code here")


def last_7_days(r, page: str, now: float) -> list:
    """Seven ints: the views of ``page`` on the 6 UTC days before ``now``'s day and on that day.

    Oldest first, today last; 0 for a day without a key.  One MGET of the seven keys: one round
    trip, O(7).  Reading creates no key.
    """
    raise NotImplementedError("last_7_days: your code here")


def top_pages(r, now: float, n: int = 3) -> list:
    """The ``n`` most viewed pages on the UTC day of ``now``: ``[[page, views], ...]``, most first.

    ZREVRANGE top:<day> 0 n-1 WITHSCORES: O(log N + n), one round trip.  Views are ints.  Pages with
    the same views come in ZREVRANGE's order (the name later in byte order first).  ``n = 0`` gives
    ``[]`` without a command (``0 .. -1`` would be every page).
    """
    raise NotImplementedError("top_pages: your code here")
