"""Lesson 05: what survives a crash.  Persistence measured, counters flushed to SQL, a delayed queue.

Four groups, one module each (persistence, ledger, article, delayqueue), gathered under one name here; the notebook shows them with :func:`redis_course.lessons.show`, the tests and
``bench/durable_*.py`` import them.

**Persistence, measured** (:func:`measure_loss`): a private ``redis-server`` with RDB or AOF is
hammered with ``INCR``, killed with SIGKILL, restarted on the same data directory, and the
acknowledged increments that did not come back are counted.

**Counters in Redis, the ledger in SQL** (:class:`Ledger`, :func:`flush_naive`,
:func:`flush_getdel`, :func:`flush_safe`): SQLite by default, PostgreSQL when ``DATABASE_URL`` is
set.  Each flusher takes ``crash_at``, a step after which it "dies" (:class:`SimulatedCrash`), so a
test can stop it at every step and check what was lost or counted twice.

**The article's delayed queue, as published** (:func:`article_add_task`, :func:`article_check_task`,
:func:`article_loop_once`): INCR ids, buckets of sorted sets, ZRANGEBYSCORE then ZREM.

**A reliable delayed queue** (:func:`schedule`, :func:`claim`, :func:`ack`, :func:`recover`,
:func:`run_worker`, :func:`run_queue`): one sorted set of due times, payloads in a hash, an atomic
claim with a lease (Lua), acknowledgement with the claim's attempt number, and recovery of
expired leases.  Every function takes the time explicitly (``now_ms``).
"""

from .persistence import (
    MODES,
    measure_loss,
)
from .ledger import (
    SimulatedCrash,
    STEPS,
    crash_point,
    Ledger,
    create_ledger,
    flush_naive,
    flush_getdel,
    CLAIM_PENDING,
    RELEASE_PENDING,
    pending_keys,
    flush_safe,
    counted,
    flush_under_traffic,
    temporary_ledger,
)
from .article import (
    UNDO_VIEW,
    undo_view,
    take_one,
    take_one_check_first,
    article_add_task,
    article_check_task,
    article_loop_once,
)
from .delayqueue import (
    queue_keys,
    schedule,
    CLAIM,
    claim,
    ACK,
    ack,
    RECOVER,
    recover,
    waiting,
    now_ms,
    run_worker,
    percentile,
    run_queue,
)

__all__ = [
    "MODES",
    "measure_loss",
    "SimulatedCrash",
    "STEPS",
    "crash_point",
    "Ledger",
    "create_ledger",
    "flush_naive",
    "flush_getdel",
    "CLAIM_PENDING",
    "RELEASE_PENDING",
    "pending_keys",
    "flush_safe",
    "counted",
    "flush_under_traffic",
    "temporary_ledger",
    "UNDO_VIEW",
    "undo_view",
    "take_one",
    "take_one_check_first",
    "article_add_task",
    "article_check_task",
    "article_loop_once",
    "queue_keys",
    "schedule",
    "CLAIM",
    "claim",
    "ACK",
    "ack",
    "RECOVER",
    "recover",
    "waiting",
    "now_ms",
    "run_worker",
    "percentile",
    "run_queue",
]
