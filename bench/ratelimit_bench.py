"""Decisions per second of lesson 04's limiters, the `limits` library's, and a one-round-trip baseline.

    .venv/bin/python bench/ratelimit_bench.py            # the server at REDIS_URL or 127.0.0.1:6379
    .venv/bin/python bench/ratelimit_bench.py --rounds 4    # a quick look

Every strategy runs on the same server through the same client and connection pool, one decision
at a time (one client, so the number is 1 / latency of a decision), spread over 1,000 client ids at
100 requests per second each, so most decisions are "allowed" and write.  The strategies take
turns in short slices (``--slice`` seconds, ``--rounds`` turns each), so a change in the machine's
load hits them all alike; a strategy's rate is its best slice.  Keys go under a course prefix and
are deleted at the end (never FLUSHALL).  Not a test: nothing here asserts a speed.
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


def strategies(r, url: str) -> dict[str, Callable[[str], object]]:
    from limits import RateLimitItemPerSecond, strategies as ls
    from limits.storage import RedisStorage

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
        "ours: first-hit window": lambda cid: rl.first_hit_window(r, cid, LIMIT, WINDOW_MS),
        "ours: sliding log": lambda cid: rl.sliding_log(r, cid, LIMIT, WINDOW_MS),
        "ours: sliding window counter": lambda cid: rl.sliding_window_counter(r, cid, LIMIT, WINDOW_MS),
        "ours: token bucket": lambda cid: rl.token_bucket(r, cid, LIMIT, WINDOW_MS),
        "ours: GCRA": lambda cid: rl.gcra(r, cid, LIMIT, WINDOW_MS),
        "limits: fixed window": lambda cid: lfixed.hit(item, "fixed", cid),
        "limits: moving window": lambda cid: lmoving.hit(item, "moving", cid),
        "limits: sliding window counter": lambda cid: lsliding.hit(item, "sliding", cid),
    }


COUNTERPART = {  # limits' fixed window opens with a client's first request, like our first-hit window
    "ours: fixed window": "limits: fixed window",
    "ours: first-hit window": "limits: fixed window",
    "ours: sliding log": "limits: moving window",
    "ours: sliding window counter": "limits: sliding window counter",
}


IDS = [f"c{i}" for i in range(CLIENTS)]


def measure(fn: Callable[[str], object], seconds: float) -> tuple[float, float]:
    """(decisions per second, round trips per decision) over ``seconds``."""
    for cid in IDS[:5]:
        fn(cid)  # load scripts
    ids = IDS
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


def server_cost(n: int = 3000) -> dict[str, float]:
    """Server CPU per decision (µs, from INFO commandstats) on a private redis-server, or {}.

    A private server: nobody else's commands in the counts, and CONFIG RESETSTAT is allowed.
    """
    from redis_course.servers import private_redis, redis_server_binary

    if not redis_server_binary():
        return {}
    cost = {}
    with private_redis() as srv:
        r = connect(srv.url, prefix="course:bench:", owned=True)
        for name, fn in strategies(r, srv.url).items():
            for cid in IDS[:5]:
                fn(cid)
            r.config_resetstat()
            for i in range(n):
                fn(IDS[i % CLIENTS])
            stats = r.info("commandstats")
            cost[name] = sum(v["usec"] for k, v in stats.items() if "config" not in k) / n
    return cost


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slice", type=float, default=0.25, help="seconds per turn (default 0.25)")
    ap.add_argument("--rounds", type=int, default=16, help="turns per strategy (default 16)")
    args = ap.parse_args(argv)

    import limits
    import redis

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    r = connect(url, prefix=f"course:bench:{secrets.token_hex(3)}:")
    try:
        fns = strategies(r, url)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                rate, trips = measure(fn, args.slice)
                if rate > best.get(name, (0.0, 0.0))[0]:
                    best[name] = (rate, trips)
            r.cleanup()
        r.cleanup()
        cost = server_cost()
        base = best["baseline: pipelined INCR+EXPIRE"][0]
        print(f"Redis {r.server_version()} at {r.where}; redis-py {redis.__version__}; limits {limits.__version__}; "
              f"Python {platform.python_version()}; {cpu_model()}, {os.cpu_count()} cores")
        print(f"one client, one decision at a time, {CLIENTS} client ids, {LIMIT} per {WINDOW_MS} ms; "
              f"best of {args.rounds} turns of {args.slice:g} s each, strategies taking turns\n")
        print(f"{'strategy':32} {'decisions/s':>11} {'round trips':>11} {'vs limits':>9} {'vs baseline':>11}"
              f" {'server µs':>9}")
        for name, (rate, trips) in best.items():
            other = COUNTERPART.get(name)
            vs_limits = f"{rate / best[other][0]:.2f}" if other else "-"
            us = f"{cost[name]:.1f}" if name in cost else "-"
            print(f"{name:32} {rate:>11,.0f} {trips:>11.2f} {vs_limits:>9} {rate / base:>11.2f} {us:>9}")
        if cost:
            print("\nserver µs: Redis CPU per decision (INFO commandstats) on a private redis-server")
    finally:
        r.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
