"""Lesson 05: a reliable delayed queue.  One sorted set of due times, payloads in a hash, an atomic claim
with a lease (Lua), acknowledgement with the claim's attempt number, recovery of expired leases, and a
measured run with worker processes, one of them killed.  Every function takes the time (``now_ms``).
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import time


def queue_keys(r, queue: str = "queue") -> dict[str, str]:
    """ids (INCR), due (ZSET id -> due ms), tasks (HASH id -> payload), processing (ZSET id ->
    lease deadline ms), attempts (HASH id -> claims so far)."""
    return {part: r.key(queue, part) for part in ("ids", "due", "tasks", "processing", "attempts")}


def schedule(r, payload: str, due_ms: int, queue: str = "queue") -> int:
    """Store ``payload`` to run at ``due_ms``; return its id.

    INCR ids, then HSET tasks + ZADD due in one MULTI/EXEC (a crash between the two round trips
    wastes an id, nothing else).  O(log N) in the number of waiting tasks.
    """
    k = queue_keys(r, queue)
    task_id = r.incr(k["ids"])
    with r.pipeline(transaction=True) as p:
        p.hset(k["tasks"], str(task_id), payload)
        p.zadd(k["due"], {str(task_id): due_ms})
        p.execute()
    return task_id


# --8<-- [start:claim]
CLAIM = """
-- KEYS: due, processing, attempts, tasks; ARGV: now_ms, lease deadline ms, limit
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local claimed = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], ARGV[2], id)
  local attempt = redis.call('HINCRBY', KEYS[3], id, 1)
  claimed[#claimed + 1] = {id, redis.call('HGET', KEYS[4], id), attempt}
end
return claimed
"""
# --8<-- [end:claim]


def claim(r, now_ms: int, lease_ms: int = 30_000, limit: int = 10, queue: str = "queue") -> list[list]:
    """Claim up to ``limit`` tasks due at ``now_ms``: ``[[id, payload, attempt], ...]``, earliest first.

    One Lua script moves each task from ``due`` to ``processing`` with the lease deadline
    ``now_ms + lease_ms`` and counts the attempt: no two workers can claim the same task, and a
    task whose worker dies comes back after the lease (:func:`recover`).  O(limit · log N).
    """
    k = queue_keys(r, queue)
    rows = r.register_script(CLAIM)(
        keys=[k["due"], k["processing"], k["attempts"], k["tasks"]], args=[now_ms, now_ms + lease_ms, limit]
    )
    return [[int(task_id), payload, int(attempt)] for task_id, payload, attempt in rows]


ACK = """
-- KEYS: processing, due, attempts, tasks; ARGV: id, attempt
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then
  return 0
end
if redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1
"""


def ack(r, task_id: int, attempt: int, queue: str = "queue") -> bool:
    """Mark a claimed task done.  False if this claim is stale: another claim (a later attempt)
    owns the task now, or it was acknowledged already.  One Lua script, O(log N)."""
    k = queue_keys(r, queue)
    done = r.register_script(ACK)(
        keys=[k["processing"], k["due"], k["attempts"], k["tasks"]], args=[str(task_id), str(attempt)]
    )
    return done == 1


RECOVER = """
-- KEYS: processing, due; ARGV: now_ms
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], ARGV[1], id)
end
return #ids
"""


def recover(r, now_ms: int, queue: str = "queue") -> int:
    """Put every task whose lease ended at or before ``now_ms`` back in ``due`` (due now); return how many.

    One Lua script, O(M · log N) for M expired leases.
    """
    k = queue_keys(r, queue)
    return r.register_script(RECOVER)(keys=[k["processing"], k["due"]], args=[now_ms])


def waiting(r, queue: str = "queue") -> int:
    """Tasks not yet acknowledged: ZCARD due + ZCARD processing."""
    k = queue_keys(r, queue)
    with r.pipeline(transaction=False) as p:
        p.zcard(k["due"])
        p.zcard(k["processing"])
        return sum(p.execute())


def now_ms() -> int:
    return int(time.time() * 1000)


def run_worker(
    url: str,
    prefix: str,
    lease_ms: int = 1000,
    batch: int = 10,
    queue: str = "queue",
    die_after: int | None = None,
    give_up_s: float = 60.0,
) -> None:
    """A worker process: recover, claim, execute, acknowledge, until the queue is empty.

    "Executing" task ``id`` records it: HINCRBY <queue>:exec:count id 1, RPUSH <queue>:exec:late
    (ms after due), and HINCRBY <queue>:exec:after-ack if it had been acknowledged before
    (SISMEMBER <queue>:acked); a payload is the due time in ms.  Each batch is one pipeline of
    records, then one pipeline of ACK scripts; acknowledged ids go to the set ``<queue>:acked``.
    The worker stops when ``<queue>:scheduled`` exists and the queue stays empty for 0.5 s, or
    after ``give_up_s`` at the latest.  With ``die_after``, the worker kills itself
    (SIGKILL) once it has executed that many tasks, in the middle of a claimed batch: half of it
    executed, none of it acknowledged.
    """
    from ..core.backend import connect

    r = connect(url, prefix=prefix)  # a prefix passed in is never cleaned up by this process on exit
    k = queue_keys(r, queue)
    ack_script = r.register_script(ACK)
    r.incr(r.key(queue, "workers-ready"))
    executed, idle_since = 0, None
    give_up = time.monotonic() + give_up_s  # never outlive a parent that went away
    while time.monotonic() < give_up:
        now = now_ms()
        recover(r, now, queue)
        tasks = claim(r, now, lease_ms, batch, queue)
        if not tasks:
            if r.exists(r.key(queue, "scheduled")) and waiting(r, queue) == 0:
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > 0.5:
                    return
            time.sleep(0.002)
            continue
        idle_since = None
        dying = die_after is not None and executed >= die_after
        if dying:
            tasks = tasks[: max(1, len(tasks) // 2)]
        with r.pipeline(transaction=False) as p:  # execute: record each task
            for task_id, payload, _ in tasks:
                p.hincrby(r.key(queue, "exec", "count"), str(task_id), 1)
                p.rpush(r.key(queue, "exec", "late"), now_ms() - int(payload))
                p.sismember(r.key(queue, "acked"), str(task_id))
            replies = p.execute()
        executed += len(tasks)
        again = [t[0] for t, seen in zip(tasks, replies[2::3]) if seen]
        for task_id in again:
            r.hincrby(r.key(queue, "exec", "after-ack"), str(task_id), 1)
        if dying:
            os.kill(os.getpid(), signal.SIGKILL)  # dies holding claimed, unacknowledged tasks
        with r.pipeline(transaction=False) as p:  # acknowledge the batch
            for task_id, _, attempt in tasks:
                ack_script(
                    keys=[k["processing"], k["due"], k["attempts"], k["tasks"]],
                    args=[str(task_id), str(attempt)],
                    client=p,
                )
            done = p.execute()
        acked = [str(t[0]) for t, ok in zip(tasks, done) if ok == 1]
        if acked:
            r.sadd(r.key(queue, "acked"), *acked)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def run_queue(
    url: str,
    prefix: str,
    tasks: int = 10_000,
    workers: int = 4,
    spread_ms: int = 3000,
    lease_ms: int = 1000,
    kill_after: float = 0.4,
    seed: int = 5,
) -> dict:
    """Start ``workers`` worker processes, schedule ``tasks`` tasks due over the next ``spread_ms``,
    wait for the queue to empty.  Worker 0 SIGKILLs itself mid-batch after ``kill_after`` of its
    share of the tasks; its claimed tasks come back when their lease ends.

    Returns executions per task (missing, twice, after ack), lateness percentiles and the time taken.
    Needs a real server: separate processes cannot share an in-process fakeredis.
    """
    import subprocess
    import sys

    from ..core.backend import connect

    r = connect(url, prefix=prefix)
    queue = f"bench-{secrets.token_hex(3)}"  # its own keys, even if another run shares the prefix

    def command(die_after):
        return [
            sys.executable,
            "-c",
            "from redis_course.lessons.delayqueue import run_worker; "
            f"run_worker({url!r}, {prefix!r}, {lease_ms!r}, queue={queue!r}, die_after={die_after!r})",
        ]

    # worker 0 kills itself mid-batch after a share of the work: claimed, half executed, unacknowledged
    procs = [subprocess.Popen(command(int(kill_after * tasks / workers) if i == 0 else None)) for i in range(workers)]
    deadline = time.monotonic() + 60
    while int(r.get(r.key(queue, "workers-ready")) or 0) < workers and time.monotonic() < deadline:
        time.sleep(0.01)  # every worker is polling: now schedule
    rng = random.Random(seed)
    start = now_ms() + 100
    with r.pipeline(transaction=False) as p:  # schedule in bulk: same keys as schedule()
        k = queue_keys(r, queue)
        for i in range(1, tasks + 1):
            due = start + rng.randrange(spread_ms)
            p.hset(k["tasks"], str(i), str(due))
            p.zadd(k["due"], {str(i): due})
        p.set(k["ids"], tasks)
        p.set(r.key(queue, "scheduled"), 1)  # workers may stop once the queue is empty
        p.execute()
    t0 = time.monotonic()
    victim = procs[0]
    for p in procs:
        try:
            p.wait(90)
        except subprocess.TimeoutExpired:  # a worker that cannot finish: stop it, report
            p.kill()
            p.wait(5)
    elapsed = time.monotonic() - t0
    counts = {int(k): int(v) for k, v in r.hgetall(r.key(queue, "exec", "count")).items()}
    late = [int(x) for x in r.lrange(r.key(queue, "exec", "late"), 0, -1)]
    after_ack = sum(int(v) for v in r.hvals(r.key(queue, "exec", "after-ack")))
    return {
        "tasks": tasks,
        "workers": workers,
        "executed": len(counts),
        "missing": tasks - len(counts),
        "twice": sum(1 for v in counts.values() if v > 1),
        "after_ack": after_ack,
        "left": waiting(r, queue),
        "killed_exit": victim.returncode,
        "seconds": elapsed,
        "late_p50": percentile(late, 50),
        "late_p95": percentile(late, 95),
        "late_p99": percentile(late, 99),
        "late_max": max(late) if late else float("nan"),
    }
