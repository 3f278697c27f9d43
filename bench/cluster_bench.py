"""Lesson 06 benchmark: a hot counter as one key vs 16 shards on a local Redis Cluster.

    .venv/bin/python bench/cluster_bench.py [seconds] [threads]

Starts a private cluster (3 primaries, 3 replicas), sends INCRs in pipelines of 100 from
``threads`` threads for ``seconds`` per variant, and prints INCR/s and the INCR calls each primary
served (INFO commandstats).  On one machine the client and the six servers share the CPU cores, so
the throughput says little about a real cluster; the split of the work between primaries does.
"""

from __future__ import annotations

import random
import sys

from redis_course.cluster import drive_incr, local_cluster


def main(seconds: float = 3.0, threads: int = 2) -> None:
    with local_cluster() as cluster:
        rc = cluster.client(prefix="course:bench:")
        one = rc.key("hot", "one")
        shards = [rc.key("hot", "sharded", i) for i in range(16)]
        print("| variant | INCR/s | INCR calls per primary | busiest primary's share |")
        print("|---|---:|---|---:|")
        for name, pick in [("one key", lambda: one), ("16 shards", lambda: random.choice(shards))]:
            cluster.reset_stats()
            n = drive_incr(rc, pick, seconds=seconds, threads=threads)
            calls = sorted(cluster.incr_calls().values(), reverse=True)
            print(f"| {name} | {n / seconds:,.0f} | {calls} | {calls[0] / max(1, sum(calls)):.0%} |")
        rc.cleanup()


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:2]), *(int(a) for a in sys.argv[2:3]))
