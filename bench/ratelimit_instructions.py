"""Server instructions per decision: the one server measure that a busy machine does not move.

A private redis-server runs under valgrind's callgrind (through ``COURSE_REDIS_SERVER``, pointing
at a small wrapper, so ``core/servers.py`` stays the one launcher); its counters are zeroed before a
strategy's decisions (``callgrind_control -z``) and dumped after them (``-d``): the instructions
the server executed for them, reading the requests and writing the replies included.  The same
scripts as :data:`ratelimit_measure.CALIBRATION` give what an empty script costs and what one
``redis.call`` adds.  Needs ``valgrind`` (Debian: ``apt-get install valgrind``); about 50 times
slower than a plain server, so a few hundred decisions per strategy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import ratelimit_measure as m

from redis_course.core.servers import PrivateRedis, redis_server_binary


def available() -> bool:
    return bool(shutil.which("valgrind") and shutil.which("callgrind_control") and redis_server_binary())


@contextmanager
def callgrind_redis() -> Iterator[tuple[PrivateRedis, Callable[[], None], Callable[[], int]]]:
    """(server, zero(), dump() -> instructions since zero()) for a private redis-server under callgrind."""
    work = Path(tempfile.mkdtemp(prefix="course-callgrind-"))
    wrapper = work / "redis-server"
    binary = redis_server_binary()
    wrapper.write_text(
        f'#!/bin/sh\ncase "$1" in --version|-v) exec {binary} "$@";; esac\n'
        f'exec valgrind --tool=callgrind --callgrind-out-file={work}/cg.%p.out {binary} "$@"\n'
    )
    wrapper.chmod(0o755)
    before = os.environ.get("COURSE_REDIS_SERVER")
    os.environ["COURSE_REDIS_SERVER"] = str(wrapper)
    srv = PrivateRedis(extra_args=["--hz", "1"])
    try:
        srv.start(timeout=180)
        pid = str(srv.proc.pid)  # type: ignore[union-attr]  # exec: the wrapper's pid is valgrind's

        def zero() -> None:
            subprocess.run(["callgrind_control", "-z", pid], capture_output=True, timeout=120)

        def dump() -> int:
            subprocess.run(["callgrind_control", "-d", pid], capture_output=True, timeout=120)
            newest = max(work.glob(f"cg.{pid}.out.*"), key=lambda p: p.stat().st_mtime)
            try:
                for line in newest.read_text().splitlines():
                    if line.startswith("summary:"):
                        return int(line.split()[1])
            finally:
                newest.unlink()
            raise RuntimeError("callgrind wrote no summary")

        yield srv, zero, dump
    finally:
        if before is None:
            os.environ.pop("COURSE_REDIS_SERVER", None)
        else:
            os.environ["COURSE_REDIS_SERVER"] = before
        srv.close()
        shutil.rmtree(work, ignore_errors=True)


def per_decision(
    build: Callable[[object, str], dict], only: Callable[[dict], dict], decisions: int = 480
) -> tuple[dict[str, float], dict[str, float]]:
    """({strategy: server instructions per decision}, {calibration: instructions}), on a callgrind server."""
    with callgrind_redis() as (srv, zero, dump):
        r = srv.client(prefix="course:bench:", socket_timeout=120)
        strategies = only(build(r, srv.url))
        out = {}
        for name, fn in strategies.items():
            ids = iter(m.Ids())
            for _ in range(2 * m.BURST):
                fn(next(ids))
            zero()
            for _ in range(decisions):
                fn(next(ids))
            out[name] = dump() / decisions
        calls = {}
        for i, (label, text) in enumerate(m.CALIBRATION.items()):
            sha = r.script_load(text)
            r.evalsha(sha, 1, r.key("calib", i, "warm"))
            zero()
            for j in range(decisions // 2):
                r.evalsha(sha, 1, r.key("calib", i, j % 50))
            calls[label] = dump() / (decisions // 2)
        r.function_load(
            "#!lua name=bench_calibration\nredis.register_function('empty', function(keys, args) return 1 end)",
            replace=True,
        )
        r.fcall("empty", 1, r.key("calib", "f", "warm"))
        zero()
        for j in range(decisions // 2):
            r.fcall("empty", 1, r.key("calib", "f", j % 50))
        fcall = dump() / (decisions // 2)
        base = calls.pop("EVALSHA of an empty script")
        return out, {
            "EVALSHA of an empty script": base,
            "FCALL of an empty function": fcall,
            **{k: v - base for k, v in calls.items()},
        }
