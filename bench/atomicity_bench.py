"""Lesson 02: the cost of 1,000 increments of one counter, by the ways the lesson compares.

    .venv/bin/python bench/atomicity_bench.py             # the server at REDIS_URL or 127.0.0.1:6379
    .venv/bin/python bench/atomicity_bench.py --fake      # embedded fakeredis (no network)

Ways: INCR one by one (the baseline: one round trip each), GET + SET (two round trips, and wrong
under concurrency), WATCH + GET + MULTI/SET/EXEC (2 round trips, no contention here), a Lua
script through EVALSHA (one round trip), a pipeline without a transaction and a MULTI/EXEC
transaction (one round trip for all 1,000).  One client, no contention; each way runs ``--rounds``
times and keeps its best time.  Keys go under a course prefix and are deleted at the end (never
FLUSHALL).  Not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import redis  # noqa: E402

from redis_course import connect  # noqa: E402

N = 1000
INCR_SCRIPT = "return redis.call('INCR', KEYS[1])"


def one_by_one(r, key):
    for _ in range(N):
        r.incr(key)


def get_set(r, key):
    for _ in range(N):
        r.set(key, int(r.get(key) or 0) + 1)


def watch(r, key):
    for _ in range(N):
        with r.pipeline() as pipe:
            pipe.watch(key)
            value = int(pipe.get(key) or 0)
            pipe.multi()
            pipe.set(key, value + 1)
            pipe.execute()


def lua(r, key):
    script = r.register_script(INCR_SCRIPT)
    for _ in range(N):
        script(keys=[key])


def pipeline(r, key, transaction):
    with r.pipeline(transaction=transaction) as pipe:
        for _ in range(N):
            pipe.incr(key)
        pipe.execute()


WAYS = [
    ("INCR one by one (baseline)", one_by_one),
    ("GET + SET", get_set),
    ("WATCH + MULTI/EXEC", watch),
    ("Lua script (EVALSHA)", lua),
    ("pipeline, no transaction", lambda r, k: pipeline(r, k, False)),
    ("MULTI/EXEC transaction", lambda r, k: pipeline(r, k, True)),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fake", action="store_true", help="use the embedded fakeredis")
    args = ap.parse_args()
    url = "" if args.fake else os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    r = connect(url, prefix=f"course:bench02:{secrets.token_hex(3)}:", verbose=True)
    best = {}
    try:
        for _ in range(args.rounds):
            for name, fn in WAYS:
                key = r.key("n")
                r.delete(key)
                start = time.perf_counter()
                fn(r, key)
                elapsed = time.perf_counter() - start
                assert int(r.get(key)) == N, name
                best[name] = min(best.get(name, elapsed), elapsed)
    except redis.RedisError as exc:
        sys.exit(f"bench failed: {exc}")
    finally:
        r.cleanup()
    base = best[WAYS[0][0]]
    print(f"\n{N} increments of one key, one client, best of {args.rounds}")
    print(f"{'way':<28} {'ms':>8} {'us/op':>8} {'vs baseline':>12}")
    for name, _ in WAYS:
        t = best[name]
        print(f"{name:<28} {t * 1000:>8.1f} {t * 1e6 / N:>8.1f} {t / base:>11.2f}x")


if __name__ == "__main__":
    main()
