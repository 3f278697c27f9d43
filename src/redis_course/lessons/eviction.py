"""Lesson 07: what ``maxmemory`` and each eviction policy do to counters and limiter keys.

Counters usually have no TTL (a total must not vanish); limiter keys always have one.  When used
memory reaches ``maxmemory`` Redis applies ``maxmemory-policy`` before each write that may grow it:

* ``noeviction``: nothing is removed; writes that may grow memory (INCR too) fail with OOM;
* ``allkeys-*``: any key may go (least recently used, least frequently used, or at random); when
  nothing is left to evict and memory is still above ``maxmemory``, writes fail with OOM too;
* ``volatile-*``: only keys with a TTL may go, counters with a retention TTL (lesson 03's dated
  counters) included; when none is left, writes fail as with noeviction.

:func:`overflow` measures it on a private ``redis-server`` (fakeredis answers OK to
``CONFIG SET maxmemory``, has no ``CONFIG GET``, and neither evicts nor refuses): fill with
counters and limiter keys, cap the memory just above what they use, and keep writing new ones as
traffic would.
"""

from __future__ import annotations

from . import ratelimit as rl

POLICIES = (
    "noeviction",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
)


def _count(c, pattern: str) -> int:
    return sum(1 for _ in c.scan_iter(match=pattern, count=1000))


def overflow(
    srv,
    policy: str,
    counters: int = 500,
    limiter_keys: int = 500,
    new: int = 1500,
    room: int = 20_000,
    counter_ttl_s: int | None = None,
    new_counters: bool = True,
) -> dict:
    """On the private server ``srv``: FLUSHALL, ``counters`` counters (INCRBY; no TTL, or
    ``counter_ttl_s`` as a dated counter's retention) and ``limiter_keys`` limiter keys (SET PX
    60 s), then ``maxmemory`` = used memory + ``room`` bytes, then ``new`` requests of traffic (a
    new limiter key and, unless ``new_counters`` is False, a new counter each, pipelined).

    Returns how many of the first counters and limiter keys are left, how many traffic writes
    failed (OOM), and INFO's ``evicted_keys``.  SCAN to count: O(N).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    c = srv.client(prefix="")
    c.config_set("maxmemory", 0)
    c.flushall()
    c.config_set("maxmemory-policy", policy)
    c.config_resetstat()
    pipe = c.pipeline(transaction=False)
    for i in range(counters):
        pipe.incrby(f"count:{i}", i + 1)
        if counter_ttl_s:
            pipe.expire(f"count:{i}", counter_ttl_s)
    for i in range(limiter_keys):
        pipe.set(f"rl:{i}", i, px=60_000 + i)
    pipe.execute()
    c.config_set("maxmemory", c.info("memory")["used_memory"] + room)
    failed = 0
    for start in range(0, new, 500):
        pipe = c.pipeline(transaction=False)
        for j in range(start, min(new, start + 500)):
            pipe.set(f"rl:new:{j}", j, px=60_000)
            if new_counters:
                pipe.incr(f"count:new:{j}")
        failed += sum(isinstance(x, Exception) for x in pipe.execute(raise_on_error=False))
    result = {
        "policy": policy,
        "counters_left": _count(c, "count:[0-9]*"),
        "limiter_keys_left": _count(c, "rl:[0-9]*"),
        "failed_writes": failed,
        "evicted": c.info("stats")["evicted_keys"],
    }
    c.config_set("maxmemory", 0)
    return result


def evicted_limit_resets(srv, policy: str = "volatile-ttl", limit: int = 10) -> dict:
    """A client is over its GCRA limit; memory pressure evicts its key; its next request passes.

    The limiter keys of the other clients fill the memory (SET PX), as a crowd of new clients does.
    Returns the decision before and after, and whether the client's key survived.
    """
    c = srv.client(prefix="lim:")
    c.config_set("maxmemory", 0)
    c.flushall()
    c.config_set("maxmemory-policy", policy)
    now = 1_700_000_000_000
    for _ in range(limit):
        rl.gcra(c, "10.0.0.1", limit=limit, now_ms=now)
    before = rl.gcra(c, "10.0.0.1", limit=limit, now_ms=now).allowed
    c.config_set("maxmemory", c.info("memory")["used_memory"] + 20_000)
    pipe = c.pipeline(transaction=False)
    for i in range(2000):  # other clients' keys, with longer TTLs than the busy client's
        pipe.set(c.key("rl", "gcra", f"client-{i}"), 0, px=120_000)
    pipe.execute(raise_on_error=False)
    survived = c.exists(c.key("rl", "gcra", "10.0.0.1")) == 1
    c.config_set("maxmemory", 0)
    after = rl.gcra(c, "10.0.0.1", limit=limit, now_ms=now).allowed
    return {"allowed_before": before, "key_survived": survived, "allowed_after": after}


def tiny_maxmemory(srv, policy: str) -> str:
    """``maxmemory`` of 1 byte, below what an empty server uses: whatever the policy evicts, memory
    stays above it, and a write gets OOM (``allkeys-*`` too).  Returns "OK" or the error's class."""
    import redis

    c = srv.client(prefix="")
    c.config_set("maxmemory", 0)
    c.flushall()
    c.config_set("maxmemory-policy", policy)
    c.set("a", 1)
    c.config_set("maxmemory", 1)
    try:
        c.incr("a")
        return "OK"
    except redis.exceptions.OutOfMemoryError as exc:
        return type(exc).__name__
    finally:
        c.config_set("maxmemory", 0)
