"""Lesson 05: one SQL transaction cannot include Redis, and what to do instead.

:func:`dual_write` is the idea of counting in Redis and writing the ledger "inside one
PostgreSQL transaction": the INCRBY is sent while the transaction is open (or right after its
COMMIT), and ``crash_after`` stops it after a step as a dying process would.  Whichever the order,
one store ends up with the increment and the other without it: the database rolls back only
what is in the database.

The fix keeps one source of truth: :func:`record` writes the event (its id and delta) and the
total in one SQL transaction, and :func:`relay` applies every recorded event to Redis with
:data:`APPLY_ONCE`, a script that increments only if the event's marker is new.  Redis may lag
behind after a crash, never diverge: the next relay catches up, and a second relay changes nothing.
:func:`apply_once` is the same step for any effect keyed by an id (a queue task's work).
"""

from __future__ import annotations

from contextlib import closing

from ..l10n import _
from .ledger import Ledger, SimulatedCrash

DUAL_STEPS = ("sql", "redis", "committed")

#: KEYS[1]: the counter, KEYS[2]: the marker of this event; ARGV[1]: delta, ARGV[2]: marker TTL (s).
#: INCRBY only when the marker is new (SET NX): the new value, or false when already applied.  O(1).
# --8<-- [start:apply-once]
APPLY_ONCE = """
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return false
"""
# --8<-- [end:apply-once]


def _crash(step: str, crash_after: str | None) -> None:
    if crash_after is not None and crash_after not in DUAL_STEPS:
        raise ValueError(f"crash_after must be one of {DUAL_STEPS} or None")
    if step == crash_after:
        raise SimulatedCrash(_("crashed after step {step!r}", step=step))


def dual_write(
    r, ledger: Ledger, name: str, delta: int, *, redis_after_commit: bool = False, crash_after: str | None = None
) -> None:
    """Count ``delta`` in Redis (INCRBY, O(1)) and in the ledger (an UPSERT) "in one transaction".

    Steps: ``sql`` (the UPSERT, not yet committed), ``redis`` (INCRBY, before the COMMIT, or after
    it with ``redis_after_commit``), ``committed``.  A crash rolls back the SQL side only.
    """
    key = r.key("counter", name)
    with closing(ledger.connect()) as db:
        db.cursor().execute(
            ledger.sql(
                "INSERT INTO {p}counters (name, total) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET total = {p}counters.total + excluded.total"
            ),
            (name, delta),
        )
        _crash("sql", crash_after)
        if not redis_after_commit:
            r.incrby(key, delta)
            _crash("redis", crash_after)
        db.commit()
        _crash("committed", crash_after)
    if redis_after_commit:
        r.incrby(key, delta)
        _crash("redis", crash_after)


def record(ledger: Ledger, name: str, delta: int, event_id: str, *, crash_at: str | None = None) -> bool:
    """The event row and the total in one SQL transaction (:meth:`Ledger.add_once`); Redis untouched."""
    return ledger.add_once(event_id, name, delta, crash_at=crash_at)


def apply_once(r, key: str, delta: int, event_id: str, ttl_s: int = 7 * 86400):
    """INCRBY ``key`` by ``delta`` unless ``event_id`` was applied before (one EVALSHA, O(1))."""
    marker = f"{key}:applied:{event_id}"
    return r.register_script(APPLY_ONCE)(keys=[key, marker], args=[delta, ttl_s])


def relay(r, ledger: Ledger, name: str) -> int:
    """Apply every recorded event of ``name`` to Redis, each once; returns how many were new."""
    with closing(ledger.connect()) as db:
        cur = db.cursor()
        cur.execute(ledger.sql("SELECT flush_id, delta FROM {p}flushes WHERE name = ? ORDER BY flush_id"), (name,))
        events = cur.fetchall()
        db.rollback()
    key = r.key("counter", name)
    return sum(1 for event_id, delta in events if apply_once(r, key, int(delta), event_id) is not None)
