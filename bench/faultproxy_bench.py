#!/usr/bin/env python3
"""Fault proxy benchmark: commands per second straight to the run's private Redis against through
:class:`redis_course.labs.sandbox.faultproxy.FaultProxy` (the baseline is the direct connection).

    .venv/bin/python bench/faultproxy_bench.py [--seconds 2] [--backend redis-server|fakeredis] [--clients 1]

The proxy runs in this process, as in the grader; each client runs in a process of its own, as the
student's code does, and sends for ``--seconds``: single SET and GET (one round trip each), then
pipelines of 100 SETs and of 100 GETs.  Prints commands per second both ways and the ratio
(proxy / direct).  A crash is armed far beyond the run's count, so every unit is counted as when
grading.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from redis_course.labs.sandbox.server import RunRedis  # noqa: E402
from redis_course.labs.sandbox import make_run_dir  # noqa: E402
from redis_course.labs.sandbox.faultproxy import FaultProxy  # noqa: E402
from redis_course.core.servers import PrivateRedis  # noqa: E402

PREFIX = "bench:"
WORKLOADS = ("SET", "GET", "SET x100 pipeline", "GET x100 pipeline")


def _client_run(path: str, workload: str, seconds: float, offset: int, out) -> None:
    import redis

    r = redis.Redis(unix_socket_path=path, protocol=3)
    key = f"{PREFIX}{offset}"
    r.set(key, "v" * 16)
    done = 0
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        if workload == "SET":
            r.set(key, "v" * 16)
            done += 1
        elif workload == "GET":
            r.get(key)
            done += 1
        else:
            pipe = r.pipeline(transaction=False)
            for i in range(100):
                if workload.startswith("SET"):
                    pipe.set(f"{key}:{i}", "v" * 16)
                else:
                    pipe.get(f"{key}:{i}")
            pipe.execute()
            done += 100
    out.put(done / (time.perf_counter() - start))
    r.close()


def measure(path: str, workload: str, seconds: float, clients: int) -> float:
    """Commands per second over every client together."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_client_run, args=(path, workload, seconds, i, q)) for i in range(clients)]
    for p in procs:
        p.start()
    rates = [q.get(timeout=seconds + 60) for _ in procs]
    for p in procs:
        p.join()
    return sum(rates)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--backend", choices=("redis-server", "fakeredis"), default="redis-server")
    ap.add_argument("--clients", type=int, default=1)
    args = ap.parse_args()

    run = make_run_dir("course-proxybench-")
    if args.backend == "redis-server":
        server = PrivateRedis(unix_socket=True, data_dir=run / "redis").start()
        upstream, stop = str(server.socket_path), server.kill
    else:
        box = RunRedis(run / "redis", "fakeredis").start()
        upstream, stop = str(box.socket_path), box.stop
    proxy = FaultProxy(str(run / "proxy.sock"), upstream, PREFIX).start()
    proxy.arm_crash(10**12)
    try:
        rows = []
        for workload in WORKLOADS:
            direct = measure(upstream, workload, args.seconds, args.clients)
            through = measure(proxy.listen_path, workload, args.seconds, args.clients)
            rows.append((workload, direct, through))
        stats = proxy.stats()
    finally:
        proxy.close()
        stop()
        shutil.rmtree(run, ignore_errors=True)

    print(f"fault proxy on {args.backend}, {args.clients} client process(es), {args.seconds:g} s each")
    print(f"{'workload':<20}{'direct cmd/s':>14}{'proxy cmd/s':>14}{'proxy/direct':>14}")
    for workload, direct, through in rows:
        print(f"{workload:<20}{direct:>14,.0f}{through:>14,.0f}{through / direct:>14.2f}")
    print(
        f"proxy: {stats['commands']:,} commands forwarded, {stats['counted_units']:,} counted units, "
        f"peak buffered {stats['peak_buffered_bytes']:,} bytes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
