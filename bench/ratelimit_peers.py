"""The strategies ``ratelimit_bench.py`` compares, each a function ``decide(client_id)`` on a given client.

* the course's seven limiters (``redis_course.lessons.ratelimit``);
* a baseline: one pipelined ``INCR`` + ``EXPIRE`` round trip, the least a counter on Redis can cost;
* the Python libraries people pick instead: ``limits`` (its Redis storage), ``throttled-py`` (its
  Redis store) and ``pyrate-limiter`` (its Redis bucket and its Redis state store).

Every strategy of one ``build()`` talks through the same redis-py client, so the same connection
pool: ``limits`` takes the pool, ``pyrate-limiter`` the client, and ``throttled-py`` gets the client
through its documented ``REDIS_CLIENT_CLASS`` option (a factory returning the shared client).
Keys go under the client's course prefix.  ``COUNTERPARTS`` maps each course limiter to the peers
that implement the same algorithm, with the reason.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Callable

from redis_course.lessons import ratelimit as rl

LIMIT, WINDOW_MS = 10, 1000  # the lesson's ten requests per second

#: Course limiter -> (peer strategies with the same algorithm, why they are its counterpart).
COUNTERPARTS: dict[str, tuple[list[str], str]] = {
    "ours: fixed window": (
        ["throttled-py: fixed window", "pyrate-limiter: fixed window"],
        "windows aligned to the clock, [k*w, (k+1)*w)",
    ),
    "ours: first-hit window": (
        ["limits: fixed window"],
        "the window opens with a client's first request and ends when its key expires",
    ),
    "ours: list": (["limits: fixed window"], "a first-hit window too, kept as a list of admission times"),
    "ours: sliding log": (
        ["limits: moving window", "pyrate-limiter: sliding log"],
        "an exact log of the last window's admissions (limits: a list, pyrate-limiter: a sorted set)",
    ),
    "ours: sliding window counter": (
        ["limits: sliding window counter", "throttled-py: sliding window"],
        "the previous fixed window's count, weighted by how much of it still overlaps",
    ),
    "ours: token bucket": (
        ["throttled-py: token bucket", "throttled-py: leaky bucket", "pyrate-limiter: GCRA"],
        "a bucket of `limit` refilled at `limit` per window (a leaky bucket as a meter, and "
        "pyrate-limiter's TokenBucket, which is its GCRA under another name)",
    ),
    "ours: GCRA": (["throttled-py: GCRA", "pyrate-limiter: GCRA"], "one theoretical arrival time per client"),
}


def _ours(r, limit: int, window_ms: int) -> dict[str, Callable[[str], object]]:
    return {
        f"ours: {name}": (lambda f: lambda cid: f(r, cid, limit, window_ms))(limiter)
        for name, limiter in rl.LIMITERS.items()
    }


def _baseline(r, limit: int, window_ms: int) -> Callable[[str], object]:
    def baseline(cid: str) -> object:
        pipe = r.pipeline(transaction=False)
        key = r.key("base", cid)
        pipe.incr(key)
        pipe.expire(key, max(1, window_ms // 1000))
        return pipe.execute()[0] <= limit

    return baseline


def _limits(r, url: str, limit: int, window_ms: int) -> dict[str, Callable[[str], object]]:
    from limits import RateLimitItemPerSecond, strategies as ls
    from limits.storage import RedisStorage

    storage = RedisStorage(url, connection_pool=r.connection_pool, key_prefix=r.key("limits"))
    item = RateLimitItemPerSecond(limit, max(1, window_ms // 1000))
    fixed, moving, sliding = (
        ls.FixedWindowRateLimiter(storage),
        ls.MovingWindowRateLimiter(storage),
        ls.SlidingWindowCounterRateLimiter(storage),
    )
    return {
        "limits: fixed window": lambda cid: fixed.hit(item, "fixed", cid),
        "limits: moving window": lambda cid: moving.hit(item, "moving", cid),
        "limits: sliding window counter": lambda cid: sliding.hit(item, "sliding", cid),
    }


_shared: list = []


def shared_client(**_ignored):
    """throttled-py's ``REDIS_CLIENT_CLASS``: hand it the bench's client instead of a new one."""
    return _shared[-1]


def _throttled(r, url: str, limit: int, window_ms: int) -> dict[str, Callable[[str], object]]:
    import throttled

    _shared.append(r)
    store = throttled.RedisStore(server=url, options={"REDIS_CLIENT_CLASS": f"{__name__}.shared_client"})
    out = {}
    for label, using in [
        ("fixed window", "fixed_window"),
        ("sliding window", "sliding_window"),
        ("token bucket", "token_bucket"),
        ("leaky bucket", "leaking_bucket"),
        ("GCRA", "gcra"),
    ]:
        t = throttled.Throttled(
            using=using,
            quota=throttled.per_duration(timedelta(milliseconds=window_ms), limit),
            store=store,
            key_prefix=r.key("throttled"),
        )
        out[f"throttled-py: {label}"] = (lambda t: lambda cid: t.limit(cid).limited)(t)
    return out


def _pyrate(r, limit: int, window_ms: int) -> dict[str, Callable[[str], object]]:
    import pyrate_limiter as pl
    from pyrate_limiter.buckets.redis_bucket import LuaScript

    rates = [pl.Rate(limit, window_ms)]
    script_hash = r.script_load(LuaScript.PUT_ITEM)

    class PerClient(pl.BucketFactory):
        """A bucket per client id, made on first use, as pyrate-limiter's docs route items.  No leaker
        thread: it would run during the other strategies' turns (the bench's keys hold seconds of entries)."""

        def __init__(self, make):
            self.make, self.buckets, self.clock = make, {}, pl.WallClock()

        def wrap_item(self, name: str, weight: int = 1):
            return pl.RateItem(name, self.clock.now(), weight=weight)

        def get(self, item):
            bucket = self.buckets.get(item.name)
            if bucket is None:
                bucket = self.buckets[item.name] = self.make(item.name)
            return bucket

    def limiter(make) -> Callable[[str], object]:
        lim = pl.Limiter(PerClient(make))
        return lambda cid: lim.try_acquire(cid, blocking=False)

    return {
        "pyrate-limiter: fixed window": limiter(
            lambda cid: pl.RedisBucket(rates, r, r.key("pyrate", "fixed", cid), script_hash, algorithm=pl.FixedWindow())
        ),
        "pyrate-limiter: sliding log": limiter(
            lambda cid: pl.RedisBucket(rates, r, r.key("pyrate", "log", cid), script_hash)
        ),
        "pyrate-limiter: GCRA": limiter(
            lambda cid: pl.StateBucket(
                rates, algorithm=pl.GCRA(), store=pl.RedisStateStore(r, r.key("pyrate", "gcra", cid))
            )
        ),
    }


def build(r, url: str, limit: int = LIMIT, window_ms: int = WINDOW_MS) -> dict[str, Callable[[str], object]]:
    """Every strategy on client ``r`` (at ``url``), ``limit`` per ``window_ms``, in the table's order."""
    return {
        "baseline: pipelined INCR+EXPIRE": _baseline(r, limit, window_ms),
        **_ours(r, limit, window_ms),
        **_limits(r, url, limit, window_ms),
        **_throttled(r, url, limit, window_ms),
        **_pyrate(r, limit, window_ms),
    }


def versions() -> str:
    """The versions of the libraries compared."""
    from importlib.metadata import version

    return "; ".join(f"{name} {version(name)}" for name in ("redis", "limits", "throttled-py", "pyrate-limiter"))
