"""Decisions per second of lesson 04's limiters, the `limits` library's, and a one-round-trip baseline.

    .venv/bin/python bench/ratelimit_bench.py            # the server at REDIS_URL or 127.0.0.1:6379
    .venv/bin/python bench/ratelimit_bench.py --seconds 1

Every strategy runs on the same server through the same client and connection pool, one decision
at a time (one client, so the number is 1 / latency of a decision), spread over 1,000 client ids at
100 requests per second each, so most decisions are "allowed" and write.  Each strategy runs for
``--seconds`` in each of ``--rounds`` rounds, interleaved; the best round counts.  Keys go under a
course prefix and are deleted at the end (never FLUSHALL).  Not a test: nothing here asserts a speed.
"""
from __future__ import annotations

import argparse
import os
import platform
import secrets
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from redis_course import connect  # noqa: E402
from redis_course.lessons import ratelimit as rl  # noqa: E402

LIMIT, WINDOW_MS, CLIENTS = 100, 1000, 1000


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def strategies(r) -> dict[str, Callable[[str], object]]:
    from limits import RateLimitItemPerSecond, strategies as ls
    from limits.storage import RedisStorage

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    storage = RedisStorage(url, connection_pool=r.connection_pool, key_prefix=r.key("limits"))
    item = RateLimitItemPerSecond(LIMIT)
    lfixed, lmoving, lsliding = (ls.FixedWindowRateLimiter(storage), ls.MovingWindowRateLimiter(storage),
                                 ls.SlidingWindowCounterRateLimiter(storage))

    def baseline(cid: str) -> object:
        pipe = r.pipeline(transaction=False)
        key = r.key("base", cid)
        pipe.incr(key)
        pipe.expire(key, 1)
        return pipe.execute()[0] <= LIMIT

    return {
        "baseline: pipelined INCR+EXPIRE": baseline,
        "ours: fixed window": lambda cid: rl.fixed_window(r, cid, LIMIT, WINDOW_MS),
        "ours: sliding log": lambda cid: rl.sliding_log(r, cid, LIMIT, WINDOW_MS),
        "ours: sliding window counter": lambda cid: rl.sliding_window_counter(r, cid, LIMIT, WINDOW_MS),
        "ours: token bucket": lambda cid: rl.token_bucket(r, cid, LIMIT, WINDOW_MS),
        "ours: GCRA": lambda cid: rl.gcra(r, cid, LIMIT, WINDOW_MS),
        "limits: fixed window": lambda cid: lfixed.hit(item, cid),
        "limits: moving window": lambda cid: lmoving.hit(item, cid),
        "limits: sliding window counter": lambda cid: lsliding.hit(item, cid),
    }


COUNTERPART = {
    "ours: fixed window": "limits: fixed window",
    "ours: sliding log": "limits: moving window",
    "ours: sliding window counter": "limits: sliding window counter",
}


def measure(fn: Callable[[str], object], seconds: float) -> tuple[float, float]:
    """(decisions per second, round trips per decision) over ``seconds``."""
    ids = [f"c{i}" for i in range(CLIENTS)]
    for cid in ids[:5]:
        fn(cid)  # load scripts
    n, stop = 0, time.perf_counter() + seconds
    with rl.count_round_trips() as trips:
        start = time.perf_counter()
        while True:
            for cid in ids[n % CLIENTS: n % CLIENTS + 50]:
                fn(cid)
            n += 50
            if time.perf_counter() >= stop:
                break
        elapsed = time.perf_counter() - start
    return n / elapsed, trips["n"] / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="per strategy per round (default 2)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)

    import limits
    import redis

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    r = connect(url, prefix=f"course:bench:{secrets.token_hex(3)}:")
    try:
        fns = strategies(r)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                rate, trips = measure(fn, args.seconds)
                if rate > best.get(name, (0.0, 0.0))[0]:
                    best[name] = (rate, trips)
                r.cleanup()
        base = best["baseline: pipelined INCR+EXPIRE"][0]
        print(f"Redis {r.server_version()} at {r.where}; redis-py {redis.__version__}; limits {limits.__version__}; "
              f"Python {platform.python_version()}; {cpu_model()}, {os.cpu_count()} cores")
        print(f"one client, one decision at a time, {CLIENTS} client ids, {LIMIT} per {WINDOW_MS} ms; "
              f"best of {args.rounds} rounds of {args.seconds:g} s\n")
        print(f"| strategy | decisions/s | round trips | vs limits | vs baseline |")
        print(f"|---|---:|---:|---:|---:|")
        for name, (rate, trips) in best.items():
            other = COUNTERPART.get(name)
            vs_limits = f"{rate / best[other][0]:.2f}" if other else ""
            print(f"| {name} | {rate:,.0f} | {trips:.2f} | {vs_limits} | {rate / base:.2f} |")
    finally:
        r.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
