"""The four measures of ``ratelimit_bench.py``, each over every strategy, strategies taking turns.

The workload is the same everywhere: each client sends a burst of ``BURST`` requests at once (with a
limit of 10: one new key, nine more allowed, two denied), then the next client, a new id every time.
So every path of every limiter (a new key, counting, denying) has a fixed share, whatever the speed.
The strategies take turns a burst at a time (a slot of a fraction of a second with 16 processes),
so a change in the machine's load hits them all alike.

* :func:`one_client`: decisions per second of one client, one decision at a time (1 / mean latency);
* :func:`many_processes`: decisions per second of 16 client processes against the same server;
* :func:`server_cost`: Redis time per decision from ``INFO commandstats`` around every burst: the
  commands the client sent (a script's inner commands are inside its ``EVALSHA``), and what each
  command inside the scripts took;
* :func:`script_calls`: what an empty script costs and what one ``redis.call`` adds to it;
* :func:`memory`: ``used_memory`` per client after 1,000 clients sent their burst.

A call (or burst) that took more than 10 times the median of its kind was interrupted (another process
had the CPU): it counts as a median one.  Server cost and memory need server-wide commands (CONFIG
RESETSTAT, FLUSHALL): they run on a private redis-server only.  Nothing here asserts a speed.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from contextlib import contextmanager
from itertools import count
from typing import Callable, Iterator

from redis.connection import AbstractConnection

from redis_course.lessons.ratelimit import count_round_trips


BURST = 12  # requests per client id, at once: with a limit of 10, 10 allowed and 2 denied
CLIENTS = 1000  # client ids for the memory measure
_CONTAINERS = {"script", "config", "client", "function", "memory", "object", "command", "slowlog"}


class Ids:
    """Client ids for the workload: ``BURST`` calls with one id, then a new one (``tag`` + a number)."""

    def __init__(self, tag: str = "c") -> None:
        self.tag, self.n = tag, count()

    def __iter__(self) -> Iterator[str]:
        for i in self.n:
            cid = f"{self.tag}{i}"
            for _ in range(BURST):
                yield cid


def _run_for(fn: Callable[[str], object], ids: Iterator[str], seconds: float) -> int:
    """Call ``fn`` on the next ids, a burst at a time, until ``seconds`` have passed; return the calls."""
    n, stop = 0, time.perf_counter() + seconds
    while True:
        for _ in range(BURST):
            fn(next(ids))
        n += BURST
        if time.perf_counter() >= stop:
            return n


def usual_mean(values: list[float]) -> float:
    """The mean, a value over 10 times the median counting as the median (that call was interrupted)."""
    med = statistics.median(values)
    return statistics.fmean(v if v <= 10 * med else med for v in values)


def one_client(
    strategies: dict[str, Callable[[str], object]], seconds: float, between: Callable[[], object] = lambda: None
) -> dict[str, tuple[float, float]]:
    """{name: (decisions/s = 1 / mean latency, round trips per decision)}, strategies taking turns a
    burst at a time for ``seconds`` in all; ``between()`` every 2 s (to delete the keys)."""
    ids = {name: iter(Ids()) for name in strategies}
    for name, fn in strategies.items():
        _run_for(fn, ids[name], 0.0)  # scripts loaded, connections open
    lat: dict[str, list[float]] = {name: [] for name in strategies}
    clock = time.perf_counter
    stop = next_clean = clock()
    stop += seconds
    trips = dict.fromkeys(strategies, 0)
    with count_round_trips() as sent:
        while clock() < stop:
            for name, fn in strategies.items():
                mine, got, before = ids[name], lat[name], sent["n"]
                for _ in range(BURST):
                    cid = next(mine)
                    t = clock()
                    fn(cid)
                    got.append(clock() - t)
                trips[name] += sent["n"] - before
            if clock() > next_clean:
                between()
                next_clean = clock() + 2.0
    return {name: (1 / usual_mean(v), trips[name] / len(v)) for name, v in lat.items()}


# ---------------------------------------------------------------- 16 processes


def _worker(conn, url: str, prefix: str, owned: bool, index: int) -> None:
    """One client process: build the strategies, then follow the schedule it is sent: strategy
    ``order[k % len(order)]`` from ``t0 + k * slot`` to the next slot, for every k; send the calls per slot."""
    import ratelimit_peers
    from redis_course import connect

    r = connect(url, prefix=prefix, owned=owned)
    strategies = ratelimit_peers.build(r, url)
    ids = {name: iter(Ids(f"p{index}-")) for name in strategies}
    for name, fn in strategies.items():
        _run_for(fn, ids[name], 0.0)
    conn.send("ready")
    t0, slot, order, slots = conn.recv()
    counts = []
    for k in range(slots):
        name = order[k % len(order)]
        fn, mine, n = strategies[name], ids[name], 0
        start, end = t0 + k * slot, t0 + (k + 1) * slot
        time.sleep(max(0.0, start - time.time()))
        while time.time() < end:
            fn(next(mine))
            n += 1
        counts.append(n)
    conn.send(counts)


def many_processes(
    url: str, prefix: str, owned: bool, names: list[str], rounds: int, slot: float, processes: int = 16
) -> dict[str, float]:
    """{name: decisions/s of ``processes`` client processes running it at once}: every strategy gets
    ``rounds`` slots of ``slot`` seconds, in turns; the median slot counts."""
    ctx = multiprocessing.get_context("spawn")
    pipes, procs = [], []
    try:
        for i in range(processes):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child, url, prefix, owned, i), daemon=True)
            p.start()
            pipes.append(parent)
            procs.append(p)
        for p in pipes:
            if p.recv() != "ready":
                raise RuntimeError("a client process did not start")
        t0 = time.time() + 1.0
        for p in pipes:
            p.send((t0, slot, names, rounds * len(names)))
        per_slot = [sum(slots) for slots in zip(*(p.recv() for p in pipes))]
        return {name: statistics.median(per_slot[i :: len(names)]) / slot for i, name in enumerate(names)}
    finally:
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()


# ---------------------------------------------------------------- server time per decision


def _command_name(args: tuple) -> str:
    words = [a.decode("utf-8", "replace") if isinstance(a, bytes) else str(a) for a in args[:2]]
    name = words[0].lower()
    return f"{name}|{words[1].lower()}" if name in _CONTAINERS and len(words) > 1 else name


@contextmanager
def sent_commands() -> Iterator[dict]:
    """``log["sent"]``: (``log["now"]``, command name as commandstats spells it) for every command the
    client sends while the block runs, in the order sent."""
    log: dict = {"now": None, "sent": []}
    send, pack_many = AbstractConnection.send_command, AbstractConnection.pack_commands

    def spy_send(self, *args, **kwargs):
        log["sent"].append((log["now"], _command_name(args)))
        return send(self, *args, **kwargs)

    def spy_pack(self, commands):
        commands = list(commands)
        log["sent"].extend((log["now"], _command_name(tuple(c))) for c in commands)
        return pack_many(self, commands)

    AbstractConnection.send_command, AbstractConnection.pack_commands = spy_send, spy_pack
    try:
        yield log
    finally:
        AbstractConnection.send_command, AbstractConnection.pack_commands = send, pack_many


def _burst_stats(r, fn: Callable[[str], object], ids: Iterator[str]) -> tuple[float, dict[str, tuple[float, float]]]:
    """One burst of ``fn`` between CONFIG RESETSTAT and INFO commandstats: (µs of the commands the client
    sent, {command run inside a script: (calls, µs)}), per decision."""
    r.config_resetstat()
    with sent_commands() as log:
        for _ in range(BURST):
            fn(next(ids))
    stats = {k[len("cmdstat_") :]: v for k, v in r.info("commandstats").items()}
    sent = {name for _, name in log["sent"]}
    top = sum(v["usec"] for k, v in stats.items() if k in sent) / BURST
    skip = sent | {"config|resetstat", "info"}
    return top, {k: (v["calls"] / BURST, v["usec"] / BURST) for k, v in stats.items() if k not in skip}


def server_cost(
    r,
    strategies: dict[str, Callable[[str], object]],
    decisions: int = 1200,
) -> dict[str, tuple[float, dict[str, tuple[float, float]]]]:
    """{name: (server µs per decision, {command inside its scripts: (calls per decision, µs per call)})}.

    ``INFO commandstats`` around every burst (CONFIG RESETSTAT before it), strategies taking turns a
    burst at a time, ``decisions`` each.  The time of the commands the client sent counts (a script's
    inner commands, which commandstats also lists, are inside its EVALSHA); the mean over the bursts,
    a burst over 10 times the median counting as the median one.
    """
    ids = {name: iter(Ids()) for name in strategies}
    for name, fn in strategies.items():
        _run_for(fn, ids[name], 0.0)
    samples: dict[str, list] = {name: [] for name in strategies}
    for _ in range(max(1, decisions // BURST)):
        for name, fn in strategies.items():
            samples[name].append(_burst_stats(r, fn, ids[name]))
    out = {}
    for name, got in samples.items():
        inner: dict[str, tuple[float, float]] = {}
        for cmd in {c for _, by in got for c in by}:
            calls = [by[cmd][0] for _, by in got if cmd in by]
            per_call = [by[cmd][1] / by[cmd][0] for _, by in got if cmd in by and by[cmd][0]]
            inner[cmd] = (sum(calls) / len(got), usual_mean(per_call) if per_call else 0.0)
        out[name] = (usual_mean([top for top, _ in got]), inner)
    return out


CALIBRATION = {
    "EVALSHA of an empty script": "return 1",
    "TIME": "redis.call('TIME') return 1",
    "GET": "redis.call('GET', KEYS[1]) return 1",
    "SET PX": "redis.call('SET', KEYS[1], '1', 'PX', 60000) return 1",
    "INCR": "redis.call('INCR', KEYS[1]) return 1",
    "HMGET of 2 fields": "redis.call('HMGET', KEYS[1], 'a', 'b') return 1",
    "HSET of 2 fields": "redis.call('HSET', KEYS[1], 'a', 1, 'b', 2) return 1",
    "PEXPIRE": "redis.call('PEXPIRE', KEYS[1], 60000) return 1",
    "ZCARD": "redis.call('ZCARD', KEYS[1]) return 1",
    "a 4-number answer": "return {1, 9, 0, 1000}",
}


def script_calls(r, rounds: int = 40) -> dict[str, float]:
    """What an empty script costs (µs), and what one ``redis.call`` of each kind adds to it, command included.

    EVALSHA of an empty script, then of scripts making one call each, 20 calls at a time between CONFIG
    RESETSTAT and INFO commandstats, taking turns: the difference of the mean times is the call.
    """
    shas = {label: r.script_load(text) for label, text in CALIBRATION.items()}
    got: dict[str, list[float]] = {label: [] for label in CALIBRATION}
    for j in range(rounds):
        for i, (label, sha) in enumerate(shas.items()):
            r.config_resetstat()
            for k in range(20):
                r.evalsha(sha, 1, r.key("calib", i, (j * 20 + k) % 100))
            got[label].append(r.info("commandstats")["cmdstat_evalsha"]["usec"] / 20)
    mean = {label: usual_mean(v) for label, v in got.items()}
    base = mean.pop("EVALSHA of an empty script")
    return {
        "EVALSHA of an empty script": base,
        "FCALL of an empty function": _fcall_empty(r, rounds),
        **{k: v - base for k, v in mean.items()},
    }


def _fcall_empty(r, rounds: int) -> float:
    """µs of FCALL of a function that returns 1 (a library loaded on this private server only)."""
    r.function_load(
        "#!lua name=bench_calibration\nredis.register_function('empty', function(keys, args) return 1 end)",
        replace=True,
    )
    got = []
    for j in range(rounds):
        r.config_resetstat()
        for k in range(20):
            r.fcall("empty", 1, r.key("calib", "f", (j * 20 + k) % 100))
        got.append(r.info("commandstats")["cmdstat_fcall"]["usec"] / 20)
    return usual_mean(got)


# ---------------------------------------------------------------- memory


def memory(r, strategies: dict[str, Callable[[str], object]], clients: int = CLIENTS) -> dict[str, tuple[float, float]]:
    """{name: (bytes of used_memory per client, keys per client)} after ``clients`` clients sent their
    burst, one client after the other; FLUSHALL between strategies."""
    out = {}
    for name, fn in strategies.items():
        r.flushall()
        fn("warm")
        before, keys0 = r.info("memory")["used_memory"], r.dbsize()
        ids = iter(Ids())
        for _ in range(clients * BURST):
            fn(next(ids))
        out[name] = ((r.info("memory")["used_memory"] - before) / clients, (r.dbsize() - keys0) / clients)
    r.flushall()
    return out
