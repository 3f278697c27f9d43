"""Lesson 07: traffic through a Redis limiter while its private redis-server is stopped or paused.

:func:`run_outage` starts a private ``redis-server``, sends requests from several caller threads at
a steady rate through lesson 04's GCRA limiter, and in the middle of the run either **stops** the
server (SIGKILL, then a restart on the same port: connections are refused at once) or **pauses**
it (SIGSTOP, then SIGCONT: the kernel still accepts connections and queues the commands, nobody
answers).  Every request records when it was due, when its caller got an answer, and the answer.

:func:`timed_out_incr_runs_later` and :func:`default_retry_counts_twice` show what a timeout means
for a counter: the command may still run, and redis-py's default retry sends it again, so it counts
at least once more (not once per retry: a retry during the pause first reconnects, and its
handshake times out before the command is sent again).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Callable

import redis

from . import ratelimit as rl
from .guard import Breaker, Guard, LocalBucket, budget_client

CLIENT = "api-key-7"


def _fault(srv, kind: str, at_s: float, for_s: float, t0: float) -> None:
    time.sleep(max(0.0, t0 + at_s - time.monotonic()))
    if kind == "pause":
        os.killpg(srv.proc.pid, signal.SIGSTOP)
        time.sleep(for_s)
        os.killpg(srv.proc.pid, signal.SIGCONT)
    else:
        srv.kill()
        time.sleep(for_s)
        srv.start()


def _decider(srv, setup: str, budget_ms: int, limit: int, cooldown_ms: int) -> Callable[[], tuple[bool | None, str]]:
    """``decide() -> (allowed or None for an error, source)`` for one client setup."""
    if setup == "defaults":  # redis-py's defaults (8.x: RESP3, 5 s socket timeout, 10 retries; before 8: no timeout)
        plain = redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True)
        plain.key, plain.prefix = (lambda *parts: "rl:" + ":".join(map(str, parts))), ""  # type: ignore[attr-defined]

        def decide():
            try:
                return rl.gcra(plain, CLIENT, limit=limit).allowed, "redis"
            except redis.exceptions.RedisError:
                return None, "error"

        return decide
    r = budget_client(srv.client(prefix=""), budget_ms)
    guard = Guard(
        lambda: rl.gcra(r, CLIENT, limit=limit),
        policy=setup,
        local=LocalBucket(limit, 1000) if setup == "local" else None,
        breaker=Breaker(cooldown_ms),
    )
    return lambda: guard()[0:2]


def run_outage(
    fault: str,
    setup: str,
    budget_ms: int = 50,
    seconds: float = 2.5,
    fault_at: float = 1.0,
    fault_for: float = 1.0,
    rate: int = 100,
    callers: int = 4,
    limit: int = 50,
    cooldown_ms: int = 250,
) -> list[dict]:
    """``rate`` requests per second for ``seconds`` from ``callers`` threads; ``fault`` ("stop" or
    "pause") from ``fault_at`` for ``fault_for`` seconds.  ``setup``: "defaults" (redis-py's defaults,
    an error is the request's answer) or a :class:`Guard` policy ("open", "closed", "local") on a
    :func:`budget_client` with a :class:`Breaker`.  Each request is one EVALSHA (GCRA, O(1)).

    Returns one dict per request: ``due`` and ``done`` (s since the start), ``allowed`` (True,
    False or None for an error), ``source``.
    """
    from ..core.servers import private_redis

    with private_redis() as srv:
        decide = _decider(srv, setup, budget_ms, limit, cooldown_ms)
        decide()  # load the script and open a connection before the clock starts
        srv.client(prefix="").flushall()
        n = int(rate * seconds)
        records: list[dict] = [{} for _ in range(n)]
        t0 = time.monotonic() + 0.05
        faulty = threading.Thread(target=_fault, args=(srv, fault, fault_at, fault_for, t0))

        def caller(k: int) -> None:
            for i in range(k, n, callers):
                due = t0 + i / rate
                time.sleep(max(0.0, due - time.monotonic()))
                allowed, source = decide()
                records[i] = {"due": i / rate, "done": time.monotonic() - t0, "allowed": allowed, "source": source}

        threads = [threading.Thread(target=caller, args=(k,)) for k in range(callers)]
        faulty.start()
        for t in threads:
            t.start()
        for t in threads + [faulty]:
            t.join()
        return records


def summarize(records: list[dict], fault_at: float = 1.0, fault_for: float = 1.0) -> dict:
    """During the fault (requests due in it): how many were allowed, denied and failed, and the
    latency callers saw (done - due, ms): median, 99th percentile and maximum."""
    eps = 1e-9  # due times are i / rate: compare them without float noise at the edges
    during = [x for x in records if fault_at - eps <= x["due"] < fault_at + fault_for - eps]
    waits = sorted((x["done"] - x["due"]) * 1000 for x in during) or [0.0]
    return {
        "requests": len(during),
        "allowed": sum(x["allowed"] is True for x in during),
        "denied": sum(x["allowed"] is False for x in during),
        "errors": sum(x["allowed"] is None for x in during),
        "p50_ms": waits[len(waits) // 2],
        "p99_ms": waits[min(len(waits) - 1, int(len(waits) * 0.99))],
        "max_ms": waits[-1],
    }


def timed_out_incr_runs_later(timeout_ms: int = 200) -> dict:
    """INCR on a paused server with a short socket timeout and no retry: the caller gets a
    TimeoutError, yet the command was delivered and runs when the server resumes."""
    from ..core.servers import private_redis

    with private_redis() as srv:
        r = budget_client(srv.client(prefix=""), timeout_ms)
        r.set("hits", 0)
        os.killpg(srv.proc.pid, signal.SIGSTOP)
        try:
            r.incr("hits")
            answer = "ok"
        except redis.exceptions.TimeoutError as exc:
            answer = type(exc).__name__
        finally:
            os.killpg(srv.proc.pid, signal.SIGCONT)
        return {"answer": answer, "hits_after_resume": int(srv.client(prefix="").get("hits"))}


def default_retry_counts_twice(timeout_ms: int = 200, pause_s: float = 1.0) -> dict:
    """One INCR through redis-py 8's default retry (10 retries with backoff on timeouts) while the
    server is paused for ``pause_s``: the caller gets one reply; the counter went up more than once.

    The server's own counts (INFO commandstats) say how: ``incr_calls`` INCRs ran (redis-py sends ``INCRBY key 1``: the one sent
    before the pause and the retry that got through), ``hello_calls`` handshakes (each retry first
    reconnects, and the HELLO of those made during the pause timed out before any INCR was sent
    again).  So a retried INCR counts at least twice, not once per retry."""
    from ..core.servers import private_redis

    with private_redis() as srv:
        r = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=timeout_ms / 1000, decode_responses=True)
        r.set("hits", 0)  # the connection is open before the pause
        r.config_resetstat()
        os.killpg(srv.proc.pid, signal.SIGSTOP)
        resume = threading.Timer(pause_s, os.killpg, args=(srv.proc.pid, signal.SIGCONT))
        resume.start()
        started = time.monotonic()
        try:
            reply = r.incr("hits")
        finally:
            resume.join()
        waited = time.monotonic() - started
        stats = srv.client(prefix="").info("commandstats")
        return {
            "reply": reply,
            "hits": int(r.get("hits")),
            "waited_s": waited,
            "retries": r.get_retry().get_retries(),
            "incr_calls": stats.get("cmdstat_incrby", {}).get("calls", 0),
            "hello_calls": stats.get("cmdstat_hello", {}).get("calls", 0),
        }
