"""Lesson 07 bench: what one limiter decision adds to a request, against one PING round trip.

    .venv/bin/python bench/limiter_cost.py [--decisions 2000] [--repeats 7]

One client on a private redis-server over TCP on 127.0.0.1 (the best case: no network between
the application and Redis) makes ``--decisions`` sequential decisions per run; strategies take
turns every 50 decisions, so a change in the machine's load hits them all alike.  Prints the median
microseconds per decision over the batches of ``--repeats`` runs and the ratio to the baseline, a ``PING`` (one
round trip that does no work).  Asserts nothing about speed.  Needs redis-server installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from redis_course.lessons import functions as fn
from redis_course.lessons import guard as g
from redis_course.lessons import ratelimit as rl
from redis_course.core.servers import private_redis, redis_server_binary

BATCH = 50  # strategies take turns every 50 decisions, so a change in the machine's load hits them all alike


def strategies(c, fast) -> dict:
    """name -> (one decision for client ``i``, Redis round trips per decision)."""
    bucket = g.LocalBucket(10**9, 1000)
    guard = g.Guard(lambda key: rl.gcra(fast, key, limit=10**6), policy="open")

    def two_trips(i: int) -> bool:  # the shape to avoid: read, decide here, then write
        key = c.key("naive", i % 100)
        if int(c.get(key) or 0) >= 10**6:
            return False
        c.incr(key)
        return True

    return {
        "baseline: PING": (lambda i: c.ping(), 1),
        "GCRA, EVALSHA": (lambda i: rl.gcra(c, f"k{i % 100}", limit=10**6).allowed, 1),
        "GCRA, FCALL": (lambda i: fn.gcra(c, f"f{i % 100}", limit=10**6).allowed, 1),
        "GCRA, EVALSHA through Guard": (lambda i: guard(f"g{i % 100}").allowed, 1),
        "GET, then INCR": (two_trips, 2),
        "local token bucket": (lambda i: bucket.allow(), 0),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    if not redis_server_binary():
        print("redis-server is not installed: nothing to measure")
        return
    with private_redis() as srv:
        c = srv.client(prefix="bench:")
        fast = g.budget_client(c, 50)
        fn.load(c)
        todo = strategies(c, fast)
        for decide, _trips in todo.values():  # load scripts, open connections
            for i in range(50):
                decide(i)
        times: dict[str, list[float]] = {name: [] for name in todo}
        for _ in range(args.repeats):
            for start in range(0, args.decisions, BATCH):
                for name, (decide, _trips) in todo.items():
                    started = time.perf_counter()
                    for i in range(start, start + BATCH):
                        decide(i)
                    times[name].append((time.perf_counter() - started) / BATCH * 1e6)
        version = c.info("server")["redis_version"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Redis {version} on 127.0.0.1 (TCP); Python {platform.python_version()}; {platform.system()} "
        f"{platform.release()}; {os.cpu_count()} cores, load {load:.1f}"
    )
    print(
        f"{args.decisions} sequential decisions per run, one client, {args.repeats} runs; "
        f"median of the batches of {BATCH}\n"
    )
    base = statistics.median(times["baseline: PING"])
    print(f"{'strategy':<30} {'trips':>5} {'µs/decision':>12} {'vs PING':>8}")
    for name, (_decide, trips) in todo.items():
        us = statistics.median(times[name])
        print(f"{name:<30} {trips:>5} {us:>12.1f} {us / base:>8.2f}")


if __name__ == "__main__":
    main()
