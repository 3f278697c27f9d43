"""Lab 01: counters with the INCR family.

Every function takes the Redis client ``r`` first. Build key names with ``r.key(...)``:
``r.key("views", "post", 17)`` is the key ``views:post:17`` under your run's prefix.
Each function needs one or two Redis commands; ``withdraw`` needs one short Lua script, so that
checking the balance and taking the money are one step.
"""
import redis

#: The largest value a Redis integer can hold (2**63 - 1).
MAX_INT64 = 2**63 - 1


def count_view(r, post_id: int) -> int:
    """Count one view of post ``post_id``; return the new number of views as an ``int``.

    Key: ``views:post:<post_id>``. Use INCR: O(1), atomic, a missing key counts as 0. Many
    processes call this at the same time, and no view may be lost.
    """
    raise NotImplementedError("count_view: your code here")


def view_count(r, post_id: int) -> int:
    """Return the number of views of post ``post_id``: ``0`` for a post never viewed.

    Key: ``views:post:<post_id>``. Use GET (O(1)); it replies ``None`` for a missing key.
    Reading must not create the key.
    """
    raise NotImplementedError("view_count: your code here")


def take_views(r, post_id: int) -> int:
    """Take the views counted so far for post ``post_id`` and restart its counter from zero.

    Return the number taken (``0`` if there were none). Views counted by other processes while
    this runs must end up either in the returned number or in the counter afterwards, never lost.
    Use GETDEL (O(1), Redis 6.2+) or ``SET key 0 GET``: one command that reads and resets.
    """
    raise NotImplementedError("take_views: your code here")


def next_id(r, kind: str) -> int:
    """Return a new id for objects of ``kind`` (``"order"``, ``"user"``, ...): 1, 2, 3, ...

    Key: ``ids:<kind>``. Use INCR (O(1)): processes that ask at the same moment get different
    replies. Each kind has its own sequence. The ids are unique while the server keeps every
    increment it acknowledged: a restart that loses the last writes hands some ids out again.
    """
    raise NotImplementedError("next_id: your code here")


def safe_incr(r, name: str, amount: int = 1) -> dict:
    """Add ``amount`` to the counter ``name`` (key ``<name>``) and report what happened, never crash.

    Return ``{"ok": True, "value": <new value>}`` on success. When Redis refuses, return
    ``{"ok": False, "error": <code>, "found": <what the key holds>}`` and leave the key unchanged:

    * ``"not_integer"`` — the value is not a canonical 64-bit integer (``"abc"``, ``" 1"``, ``"007"``, ``"1.5"``);
      ``found`` is the stored string;
    * ``"overflow"`` — the result would leave −2**63 … 2**63 − 1; ``found`` is the stored string;
    * ``"wrong_type"`` — the key is not a string (a list, a hash, ...); ``found`` is its type name from TYPE.

    ``amount`` that is not an ``int`` (a ``float``, a ``str``, a ``bool``: ``True`` is an ``int`` in
    Python) is a programming error: raise ``TypeError`` and write nothing.

    Use INCRBY (O(1)); Redis checks the value and refuses atomically, so do not predict the result
    with GET first: another process can change the value between your GET and your INCRBY.
    redis-py raises ``redis.exceptions.ResponseError`` for each refusal; its message tells them
    apart (``WRONGTYPE ...``, ``... would overflow``, ``value is not an integer or out of range``).
    Only after a refusal read what the key holds (GET or TYPE, O(1)), for the report.
    """
    raise NotImplementedError("safe_incr: your code here")


def deposit(r, account: int, cents: int) -> int:
    """Add ``cents`` (an integer number of cents, > 0) to the balance of ``account``; return the new balance.

    Key: ``balance:<account>``, holding an integer number of cents. Use INCRBY (O(1)).

    * ``cents`` that is not an ``int`` (a ``float`` such as ``19.99``, a ``str``, a ``bool``): raise ``TypeError``;
    * ``cents <= 0``: raise ``ValueError``;
    * a deposit that would take the balance past 2**63 − 1: raise ``OverflowError``, balance unchanged.

    Nothing may be written to Redis when the arguments are refused.
    """
    raise NotImplementedError("deposit: your code here")


#: KEYS[1]: the balance in cents; ARGV[1]: the amount. The new balance, or -1 when the balance does
#: not cover the amount (then nothing is written). GET, compare and DECRBY in one script: O(1).
WITHDRAW = """
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if balance < amount then
  return -1
end
return redis.call('DECRBY', KEYS[1], amount)
"""


def withdraw(r, account: int, cents: int) -> int:
    """Take ``cents`` (an ``int`` > 0) from the balance of ``account``; return the new balance.

    Key: ``balance:<account>``. The balance must never end below 0: when there is not enough money,
    raise ``ValueError`` and leave the balance as it was. Many processes withdraw at once, and a
    process can die at any moment: no money may be lost, and a withdrawal that the balance covers
    must not be refused because another one is running.

    Check and take in one step: the Lua script ``WITHDRAW`` above (``r.register_script(WITHDRAW)``,
    then call it with ``keys=[key], args=[cents]``: one EVALSHA, O(1)). Checking first with GET and
    then decrementing lets two processes both see enough money and overdraw; "DECRBY, then INCRBY
    it back when the result is negative" refuses valid withdrawals while the balance is briefly
    negative, and a crash before the INCRBY keeps the money. Argument checks as in
    :func:`deposit` (``TypeError``, ``ValueError``).
    """
    raise NotImplementedError("withdraw: your code here")
