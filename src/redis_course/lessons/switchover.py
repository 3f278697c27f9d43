"""Lesson 07: a primary switch as a client sees it, on a private primary and its private replica.

Every function starts its own pair (:func:`primary_and_replica`) and stops it; clients never retry
and wait at most ``TIMEOUT_S`` for any reply, so that what reaches the caller is what the server
said, and nothing hangs.

* :func:`planned_failover`: ``FAILOVER`` on the primary while a client keeps writing to the
  primary's address.  The switch pauses writes until the replica has caught up, so nothing
  acknowledged is lost; the write that arrived during the switch waits, then every write to the old
  address gets ``READONLY``.  redis-py does not retry a ``ResponseError``, and a client that only
  knows one address never finds the new primary (a Sentinel-aware pool turns ``READONLY`` into a
  ``ConnectionError`` and asks Sentinel again).
* :func:`unplanned_failover`: the replica is cut off (frozen, its link dropped), the primary
  acknowledges more writes, ``WAIT`` says no replica has them, the primary dies and the replica is
  promoted (``REPLICAOF NO ONE``, what Sentinel or a cluster would do).  The acknowledged writes are
  gone: a limiter's counts are forgiven, a semaphore's slot is granted a second time.  A replica
  with ``replica-serve-stale-data no`` answers ``MASTERDOWN`` while it has no primary.
* :func:`min_replicas`: ``min-replicas-to-write 1`` makes the primary refuse writes (``NOREPLICAS``)
  once its replica lags, instead of acknowledging what it may lose.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from typing import Iterator

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

TIMEOUT_S = 3.0  # the longest any reply may take here (a planned switch pauses writes < 1 s)
FAST_SYNC = ["--repl-diskless-sync-delay", "0"]  # a full sync starts at once, not after 5 s


def client_of(srv, prefix: str = "course:fo:"):
    """A client of ``srv`` that never retries and waits at most ``TIMEOUT_S`` (connect: 1 s)."""
    return srv.client(prefix=prefix, socket_timeout=TIMEOUT_S, socket_connect_timeout=1.0, retry=Retry(NoBackoff(), 0))


def wait_link_up(replica_client, timeout: float = 10.0) -> None:
    """Poll ``INFO replication`` until the replica's link to its primary is up."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if replica_client.info("replication").get("master_link_status") == "up":
            return
        time.sleep(0.02)
    raise TimeoutError("the replica did not connect to its primary")


@contextlib.contextmanager
def primary_and_replica(replica_args: list[str] | None = None, persistence: str = "none") -> Iterator[tuple]:
    """A private primary and a private replica of it, link up; both stopped and removed after.

    ``persistence`` is both servers' setting (:data:`redis_course.core.servers.PERSISTENCE`).  Lessons 05
    and 07 start every pair they need here."""
    from ..core.servers import PrivateRedis

    primary = PrivateRedis(persistence=persistence, extra_args=list(FAST_SYNC))
    replica = PrivateRedis(persistence=persistence, extra_args=list(FAST_SYNC) + list(replica_args or []))
    try:
        primary.start()
        replica.extra_args += ["--replicaof", "127.0.0.1", str(primary.port)]
        replica.start()
        wait_link_up(replica.client(prefix="", socket_timeout=TIMEOUT_S))
        yield primary, replica
    finally:
        for srv in (replica, primary):
            if srv.proc and srv.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(srv.proc.pid, signal.SIGCONT)  # a frozen server cannot stop
        replica.close()
        primary.close()


def _role(client) -> str:
    role = client.execute_command("ROLE")[0]
    return role.decode() if isinstance(role, bytes) else role


def planned_failover(writes: int = 150, every_s: float = 0.005) -> dict:
    """``FAILOVER`` while a client writes ``INCR hits`` to the primary's address every ``every_s``.

    Returns ``{"acked", "answers"}`` (error class → count, ``"ok"`` for acknowledged writes),
    ``"slowest_ms"`` (the write held during the switch), ``"first_error"``, ``"old_role"`` and
    ``"new_role"`` after the switch, ``"on_new_primary"`` and ``"lost"`` (acknowledged, not on the
    new primary), ``"ok_after_first_error"`` (writes acknowledged once the errors began).
    """
    with primary_and_replica() as (primary, replica):
        writer, admin, new = client_of(primary), client_of(primary, ""), client_of(replica)
        answers: list[tuple[str, float, str]] = []

        def write() -> None:
            for _ in range(writes):
                started = time.monotonic()
                try:
                    writer.incr("hits")
                    answers.append(("ok", time.monotonic() - started, ""))
                except redis.exceptions.RedisError as exc:
                    answers.append((type(exc).__name__, time.monotonic() - started, str(exc)))
                time.sleep(every_s)

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        time.sleep(writes * every_s / 4)
        admin.execute_command("FAILOVER", "TIMEOUT", int(TIMEOUT_S * 1000))
        thread.join(writes * (every_s + TIMEOUT_S))
        counts: dict[str, int] = {}
        for kind, _t, _m in answers:
            counts[kind] = counts.get(kind, 0) + 1
        acked = counts.get("ok", 0)
        on_new = int(new.get("hits") or 0)
        errors = [m for kind, _t, m in answers if kind != "ok"]
        first = next((i for i, (kind, _t, _m) in enumerate(answers) if kind != "ok"), len(answers))
        return {
            "ok_after_first_error": sum(kind == "ok" for kind, _t, _m in answers[first:]),
            "acked": acked,
            "answers": counts,
            "slowest_ms": max(t for _k, t, _m in answers) * 1000,
            "first_error": errors[0] if errors else None,
            "old_role": _role(admin),
            "new_role": _role(new),
            "on_new_primary": on_new,
            "lost": acked - on_new,
        }


def _cut_off(primary_admin, replica) -> None:
    """Freeze the replica (a partition, a long pause) and drop its link: nothing more reaches it."""
    os.killpg(replica.proc.pid, signal.SIGSTOP)
    primary_admin.client_kill_filter(_type="replica")


def unplanned_failover(before: int = 10, after_cut: int = 5, lease_ms: int = 60_000) -> dict:
    """A primary that dies with writes its replica never got, and the replica promoted.

    ``before`` ``INCR hits`` reach the replica (``WAIT`` says 1); then the replica is cut off and
    ``after_cut`` more are acknowledged, with a semaphore slot (limit 1) granted to ``a``; ``WAIT 1
    100`` says 0 and the write is still on the primary.  The primary is killed: its address refuses
    connections; the replica, set to ``replica-serve-stale-data no``, answers ``MASTERDOWN``; then it
    is promoted.  Returns what the client saw and what the new primary holds.
    """
    from . import semaphore as sem

    with primary_and_replica() as (primary, replica):
        p, admin = client_of(primary), client_of(primary, "")
        rep = client_of(replica)
        for _ in range(before):
            p.incr("hits")
        wait_in_sync = p.execute_command("WAIT", 1, 1000)
        _cut_off(admin, replica)
        for _ in range(after_cut):
            acked = p.incr("hits")
        a = sem.acquire(p, "jobs", 1, lease_ms)
        started = time.monotonic()
        wait_cut = p.execute_command("WAIT", 1, 100)
        wait_ms = (time.monotonic() - started) * 1000
        kept_after_wait = int(p.get("hits"))
        primary.kill()
        try:
            p.incr("hits")
            old_address = "ok"
        except redis.exceptions.RedisError as exc:
            old_address = type(exc).__name__
        os.killpg(replica.proc.pid, signal.SIGCONT)
        rep.config_set("replica-serve-stale-data", "no")
        try:
            rep.get("hits")
            stale_read = "ok"
        except redis.exceptions.RedisError as exc:
            stale_read = type(exc).__name__
        rep.execute_command("REPLICAOF", "NO", "ONE")  # the failover
        promoted = int(rep.get("hits") or 0)
        b = sem.acquire(rep, "jobs", 1, lease_ms)
        return {
            "acked": acked,
            "wait_in_sync": wait_in_sync,
            "wait_after_cut": wait_cut,
            "wait_ms": wait_ms,
            "on_primary_after_wait": kept_after_wait,
            "old_address": old_address,
            "stale_read": stale_read,
            "on_new_primary": promoted,
            "lost": acked - promoted,
            "a_granted": a.token is not None,
            "b_granted_too": b.token is not None,
        }


def _first_accepted_write(p, within_s: float = 10.0) -> int:
    """INCR until the primary takes it: right after the setting, the replica's last ACK (one a
    second) may already be older than the allowed lag on a busy machine, and NOREPLICAS comes first."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return p.incr("hits")
        except redis.exceptions.ResponseError as exc:
            if not str(exc).startswith("NOREPLICAS") or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def min_replicas(max_lag_s: int = 1, writes_for_s: float = 6.0) -> dict:
    """A primary with ``min-replicas-to-write 1`` and ``min-replicas-max-lag max_lag_s``; its replica
    frozen: writes go on until the replica's lag passes ``max_lag_s``, then the primary answers
    ``NOREPLICAS``.  Returns ``{"before", "refused_after_s", "error", "acked_while_frozen"}``."""
    with primary_and_replica() as (primary, replica):
        admin, p = client_of(primary, ""), client_of(primary)
        admin.config_set("min-replicas-to-write", 1)
        admin.config_set("min-replicas-max-lag", max_lag_s)
        before = _first_accepted_write(p)
        os.killpg(replica.proc.pid, signal.SIGSTOP)
        started, acked, error, refused_after = time.monotonic(), 0, None, None
        while time.monotonic() - started < writes_for_s:
            try:
                p.incr("hits")
                acked += 1
            except redis.exceptions.ResponseError as exc:
                error, refused_after = str(exc), time.monotonic() - started
                break
            time.sleep(0.02)
        return {"before": before, "refused_after_s": refused_after, "error": error, "acked_while_frozen": acked}
