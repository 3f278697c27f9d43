"""Lab 02: move money and sell tickets without losing an update.

Every function takes the Redis client ``r`` first.  Build key names with ``r.key(...)``:
``r.key("account", "alice")`` is the key ``account:alice`` under your run's prefix.

Money is an integer number of cents, stored as a decimal string (``"1250"`` is 12.50), so that
INCRBY and DECRBY work on it.  A missing account has a balance of 0.

Up to 16 processes call these functions at the same time on the same keys.  Reading a value,
deciding in Python and writing it back is not safe between processes: use a Lua script
(``r.eval`` or ``r.register_script``) or ``WATCH`` with ``MULTI``/``EXEC`` and retries.
"""


def transfer(r, src: str, dst: str, amount: int) -> bool:
    """Move ``amount`` cents from account ``src`` to account ``dst``.

    Keys: ``account:<src>`` and ``account:<dst>``.  Return True when the money moved, False when
    ``src`` has less than ``amount`` (then nothing changes).  A balance never goes below 0 and no
    cent is ever created or lost, however many transfers run at once.

    Raise ValueError when ``amount`` is not a positive ``int`` (money is whole cents: 2.5 is not
    allowed) or when ``src == dst``.

    Cost: one EVAL (GET, then DECRBY and INCRBY only if the balance suffices): O(1), one round
    trip, atomic because the script runs as a single command.  Alternative: WATCH src, GET,
    MULTI/DECRBY/INCRBY/EXEC, retried on WatchError (2+ round trips per attempt).
    """
    # BEGIN SOLUTION
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError(f"amount must be a positive whole number of cents, not {amount!r}")
    if src == dst:
        raise ValueError("src and dst must be different accounts")
    script = """
    local available = tonumber(redis.call('GET', KEYS[1]) or '0')
    local wanted = tonumber(ARGV[1])
    if available < wanted then return 0 end
    redis.call('DECRBY', KEYS[1], wanted)
    redis.call('INCRBY', KEYS[2], wanted)
    return 1
    """
    done = r.eval(script, 2, r.key("account", src), r.key("account", dst), amount)
    return done == 1
    # END SOLUTION


def take_ticket(r, event: str) -> int | None:
    """Sell one ticket for ``event``: return its seat number, or None when the event is sold out.

    Keys: ``event:<event>:capacity`` holds the number of seats (set by the organiser; missing means
    0 seats) and ``event:<event>:sold`` counts the tickets sold (missing means 0).  Seats are
    numbered 1, 2, ... capacity in the order they are sold: every buyer gets a different seat,
    and never more tickets than seats are sold, however many buyers call at once.  After a sale,
    ``sold`` equals the seat number just sold.

    Cost: one EVAL (GET capacity, GET sold, INCR sold only if a seat is left): O(1), one round
    trip, atomic.
    """
    # BEGIN SOLUTION
    script = """
    local capacity = tonumber(redis.call('GET', KEYS[1]) or '0')
    local sold = tonumber(redis.call('GET', KEYS[2]) or '0')
    if sold >= capacity then
      return false
    end
    return redis.call('INCR', KEYS[2])
    """
    seat = r.eval(script, 2, r.key("event", event, "capacity"), r.key("event", event, "sold"))
    return int(seat) if seat is not None else None
    # END SOLUTION
