"""Lesson 05 bench: the reliable delayed queue with 10,000 tasks, 4 worker processes, one killed.

    .venv/bin/python bench/durable_queue.py [--tasks 10000] [--workers 4] [--url redis://127.0.0.1:6379/0]

Also measures what SIGKILL costs under each persistence mode (private redis-server processes).
Prints tables; asserts nothing about speed.  Needs a real Redis server and redis-server installed.
"""

from __future__ import annotations

import argparse
import os

from redis_course import connect
from redis_course.lessons import durable as d
from redis_course.core.servers import redis_server_binary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--spread-ms", type=int, default=5000)
    ap.add_argument("--lease-ms", type=int, default=1000)
    ap.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    ap.add_argument("--repeats", type=int, default=5, help="kill-and-restart rounds per persistence mode")
    args = ap.parse_args()

    r = connect(args.url)
    try:
        res = d.run_queue(
            args.url, r.prefix, tasks=args.tasks, workers=args.workers, spread_ms=args.spread_ms, lease_ms=args.lease_ms
        )
    finally:
        r.cleanup()
    print(
        f"queue: {res['tasks']} tasks due over {args.spread_ms} ms, {res['workers']} workers, "
        f"lease {args.lease_ms} ms, worker 0 SIGKILLed mid-batch (exit {res['killed_exit']})"
    )
    print(
        f"  executed {res['executed']}, missing {res['missing']}, run twice {res['twice']} "
        f"(the dead worker's unacknowledged batch), run after ack {res['after_ack']}, left {res['left']}"
    )
    print(
        f"  lateness ms: p50 {res['late_p50']}  p95 {res['late_p95']}  p99 {res['late_p99']}  "
        f"max {res['late_max']}   ({res['seconds']:.1f} s)"
    )

    if not redis_server_binary():
        print("redis-server is not installed: persistence rounds skipped")
        return
    print(f"\npersistence: one client INCRs for 1 s, SIGKILL, restart ({args.repeats} rounds each)")
    print(f"{'mode':<13} {'lost min':>9} {'lost max':>9} {'INCR/s':>8}")
    for mode in d.MODES:
        runs = [d.measure_loss(mode, seconds=1.0) for _ in range(args.repeats)]
        lost = [run["lost"] for run in runs]
        ops = sorted(run["ops_per_s"] for run in runs)[len(runs) // 2]
        print(f"{mode:<13} {min(lost):>9} {max(lost):>9} {ops:>8.0f}")


if __name__ == "__main__":
    main()
