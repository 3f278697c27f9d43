"""Lesson 07: a hot key, one counter that every request hits, and three ways to cool it.

* :func:`placement`: a global limiter key is one hash slot, so on a cluster one primary serves all
  of its traffic however many primaries there are; the shards of a sharded counter (no common hash
  tag) land in many slots, on every primary (pure Python, lesson 06's slots).
* :func:`sharded_window`: a global limit split over ``shards`` counters, each allowing
  ``limit // shards``: no key takes all the traffic, the sum is read with one pipeline of GETs (an
  MGET across slots would be CROSSSLOT), and the price is a limit that is a little lower and
  uneven (a request whose shard is full is denied while another shard has room).
* :class:`Batcher` and :func:`batched_window`: each process counts locally and sends one INCRBY per
  ``batch`` hits; it decides from the last total Redis gave it plus its own count, so N processes
  may admit up to about ``(N - 1) * batch`` past the limit, and a process that dies loses what it
  had not sent.
* :func:`lfu_view`: ``OBJECT FREQ`` and ``redis-cli --hotkeys`` need an LFU ``maxmemory-policy``;
  under any other they refuse (private server).

Windows are fixed and keyed by the caller (``window`` names one): the lesson is about where the
traffic lands, not about the window (lesson 04 has those).
"""

from __future__ import annotations

import random
import subprocess

from ..cluster.slots import default_primary, key_slot

SHARDS = 16


def shard_key(r, name: str, i: int) -> str:
    """The ``i``-th shard of counter ``name``: no hash tag, so shards spread over slots.

    Two digits, so that every shard's name has one length: CRC16 is linear, and two names of one
    length that differ only at their end then land in different slots under any prefix.  With
    ``0`` .. ``15``, about one random prefix in 1,700 put two shards in one slot."""
    return r.key("hot", name, f"{i:02d}")


def placement(r, name: str = "global", shards: int = SHARDS, primaries: int = 3) -> dict:
    """Slots and primaries (of a cluster made by ``redis-cli --cluster create``) of one key and of
    ``shards`` shards.  No round trip."""
    one = r.key("hot", name)
    slots = {key_slot(shard_key(r, name, i)) for i in range(shards)}
    return {
        "one key": {"slots": 1, "primaries": len({default_primary(key_slot(one), primaries)})},
        f"{shards} shards": {"slots": len(slots), "primaries": len({default_primary(s, primaries) for s in slots})},
    }


def sharded_hit(r, name: str, shards: int, limit: int, rng: random.Random) -> bool:
    """One request against a global ``limit`` split over ``shards``: INCR a random shard (one round
    trip, O(1)); allowed while that shard is within ``limit // shards``.  The shard's TTL is the
    caller's business (a window key)."""
    return r.incr(shard_key(r, name, rng.randrange(shards))) <= limit // shards


def sharded_total(r, name: str, shards: int) -> int:
    """The exact sum: GET every shard in one pipeline (one batch per primary on a cluster), O(shards)."""
    with r.pipeline(transaction=False) as p:
        for i in range(shards):
            p.get(shard_key(r, name, i))
        return sum(int(v or 0) for v in p.execute())


def sharded_window(r, window: str, requests: int, limit: int, shards: int = SHARDS, seed: int = 7) -> dict:
    """``requests`` in one window against a global ``limit``: one key, and ``shards`` shards.
    Returns admitted, round trips and the busiest key's share of the traffic for each."""
    rng = random.Random(seed)
    one = r.key("hot", window, "one")
    admitted_one = sum(r.incr(one) <= limit for _ in range(requests))
    name = f"{window}:sharded"
    admitted_sharded = sum(sharded_hit(r, name, shards, limit, rng) for _ in range(requests))
    with r.pipeline(transaction=False) as p:
        for i in range(shards):
            p.get(shard_key(r, name, i))
        per_shard = [int(v or 0) for v in p.execute()]
    return {
        "one key": {"admitted": admitted_one, "round trips": requests, "busiest key": 1.0},
        f"{shards} shards": {
            "admitted": admitted_sharded,
            "round trips": requests,
            "busiest key": round(max(per_shard) / requests, 3),
            "sum of shards": sharded_total(r, name, shards),
        },
    }


class Batcher:
    """One process's share of a global counter: ``hit()`` decides locally and every ``batch`` hits
    sends them in one INCRBY, whose reply (the global total) it decides from until the next one."""

    def __init__(self, r, key: str, limit: int, batch: int) -> None:
        self.r, self.key, self.limit, self.batch = r, key, limit, batch
        self.pending, self.seen, self.round_trips = 0, 0, 0

    def hit(self) -> bool:
        allowed = self.seen + self.pending < self.limit
        if allowed:
            self.pending += 1
            if self.pending >= self.batch:
                self.flush()
        return allowed

    def flush(self) -> None:
        """Send what is pending (also on a timer, and at shutdown: what is never sent is lost)."""
        if self.pending:
            self.seen = self.r.incrby(self.key, self.pending)
            self.round_trips += 1
            self.pending = 0


def batched_window(
    r, window: str, requests: int, limit: int, processes: int = 4, batch: int = 50, crash_after: int = 130
) -> dict:
    """``requests`` spread round-robin over ``processes`` Batchers of one global counter: admitted,
    round trips and the total Redis holds.  Then a second window: after ``crash_after`` requests the
    last process dies before its flush, the others flush; what it had counted is lost."""
    key = r.key("hot", window, "batched")
    procs = [Batcher(r, key, limit, batch) for _ in range(processes)]
    admitted = sum(procs[i % processes].hit() for i in range(requests))
    for p in procs:
        p.flush()
    crash_key = r.key("hot", window, "crash")
    crashing = [Batcher(r, crash_key, limit, batch) for _ in range(processes)]
    for i in range(crash_after):
        crashing[i % processes].hit()
    lost = crashing[-1].pending  # the last process dies here, before its flush
    for p in crashing[:-1]:
        p.flush()
    return {
        "admitted": admitted,
        "round trips": sum(p.round_trips for p in procs),
        "over the limit": max(0, admitted - limit),
        "bound (N - 1) * batch": (processes - 1) * batch,
        "total in Redis": int(r.get(key) or 0),
        "crash: counted": crash_after,
        "crash: in Redis": int(r.get(crash_key) or 0),
        "crash: lost": lost,
    }


def lfu_view(srv, key: str = "hot", hits: int = 300, cli: str | None = None) -> dict:
    """On a private server: ``OBJECT FREQ`` and ``redis-cli --hotkeys`` under ``noeviction``, then
    under ``allkeys-lfu`` after ``hits`` INCRs of ``key`` beside 50 cold keys."""
    from ..cluster.nodes import redis_cli_binary

    admin = srv.client(prefix="")
    cli = cli or redis_cli_binary()
    for i in range(50):
        admin.set(f"cold:{i}", 1)
    out: dict = {}
    for policy in ("noeviction", "allkeys-lfu"):
        admin.config_set("maxmemory-policy", policy)
        for _ in range(hits):
            admin.incr(key)
        try:
            out[f"OBJECT FREQ, {policy}"] = int(admin.execute_command("OBJECT", "FREQ", key))
        except Exception as exc:  # noqa: BLE001 - the server's refusal is the answer
            out[f"OBJECT FREQ, {policy}"] = str(exc).split(",")[0]
        if cli:
            run = subprocess.run([cli, "-p", str(srv.port), "--hotkeys"], capture_output=True, text=True, timeout=20)
            text = run.stdout + run.stderr
            found = [line.split("keyname: ")[1].strip('"') for line in text.splitlines() if "keyname: " in line]
            err = next((line.strip() for line in text.splitlines() if "Error:" in line), None)
            out[f"--hotkeys, {policy}"] = found if found else err
    return out
