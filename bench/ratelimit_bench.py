"""Lesson 04's limiters against the Python libraries people use instead, and a one-round-trip baseline.

    .venv/bin/python bench/ratelimit_bench.py            # about 5 minutes on 2 busy cores
    .venv/bin/python bench/ratelimit_bench.py --quick    # a quick look, rougher numbers
    .venv/bin/python bench/ratelimit_bench.py --url redis://127.0.0.1:6379/0   # throughput there

Strategies: the course's seven limiters, a baseline (``INCR`` + ``EXPIRE`` in one pipelined round
trip) and the peers mapped to them in ``ratelimit_peers.COUNTERPARTS``: ``limits``, ``throttled-py``
and ``pyrate-limiter`` on their Redis back ends, all at 10 requests per second per client, through
the same redis-py client and connection pool, on the same server.  Measures:

* **1 client**: decisions per second of one client, one decision at a time (1 / mean latency);
* **16 procs**: decisions per second of 16 client processes running the same strategy at once
  against the same server (where the server's and the clients' CPU count); median slot;
* **server µs**: Redis time per decision from ``INFO commandstats`` around every burst, counting the
  commands the client sent (a script's inner commands are inside its ``EVALSHA``), on a private
  redis-server; below the table, what each command inside the scripts took, and what an empty
  script and one ``redis.call`` cost (calibration);
* **B/client**: ``used_memory`` per client after 1,000 clients sent their burst (10 per hour, so
  nothing expires while it is measured), and the number of keys per client.

The workload: every client id sends a burst of 12 requests at once (10 allowed, 2 denied), then
the next id: each path of each limiter has a fixed share, however fast the machine.  The strategies
take turns a burst at a time (16 procs: slots of a fraction of a second), so a change in the
machine's load hits them all alike; compare ratios, and medians over repeated runs.

Ratios: a course limiter against its best peer counterpart (the fastest, or the cheapest for server
µs) and against the baseline.  Throughput runs on a private redis-server when ``redis-server`` is
installed (nobody else's commands on it), else on ``--url`` / ``REDIS_URL`` / 127.0.0.1:6379 under a
course prefix (deleted at the end, never FLUSHALL).  Not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import secrets
import sys
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ratelimit_instructions as instructions  # noqa: E402
import ratelimit_measure as m  # noqa: E402
import ratelimit_peers as peers  # noqa: E402

from redis_course import connect  # noqa: E402
from redis_course.l10n import N_, _, join  # noqa: E402
from redis_course.core.servers import private_redis, redis_server_binary  # noqa: E402

BASE = "baseline: pipelined INCR+EXPIRE"

# What the tables call each strategy and each calibrated call, in the reader's language (the names
# themselves stay the keys of ratelimit_peers and ratelimit_measure, and what --only matches).
LABELS = (
    N_("baseline: pipelined INCR+EXPIRE"),
    N_("ours: fixed window"),
    N_("ours: first-hit window"),
    N_("ours: list"),
    N_("ours: sliding log"),
    N_("ours: sliding window counter"),
    N_("ours: token bucket"),
    N_("ours: GCRA"),
    N_("limits: fixed window"),
    N_("limits: moving window"),
    N_("limits: sliding window counter"),
    N_("throttled-py: fixed window"),
    N_("throttled-py: sliding window"),
    N_("throttled-py: token bucket"),
    N_("throttled-py: leaky bucket"),
    N_("throttled-py: GCRA"),
    N_("pyrate-limiter: fixed window"),
    N_("pyrate-limiter: sliding log"),
    N_("pyrate-limiter: GCRA"),
    N_("EVALSHA of an empty script"),
    N_("FCALL of an empty function"),
    N_("HMGET of 2 fields"),
    N_("HSET of 2 fields"),
    N_("a 4-number answer"),
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine(r) -> str:
    load = ", " + _("load {load}", load=f"{os.getloadavg()[0]:.1f}") if hasattr(os, "getloadavg") else ""
    return join(
        _("Redis {version} at {where};", version=r.server_version(), where=r.where),
        f"{peers.versions()}; Python {platform.python_version()}; {platform.system()} {platform.release()}; "
        + f"{cpu_model()}, "
        + _("{n} cores", n=os.cpu_count())
        + load,
    )


def _columns(text: str) -> int:
    """Terminal columns of ``text`` (a Chinese character takes two)."""
    import unicodedata

    return len(text) + sum(1 for ch in text if unicodedata.east_asian_width(ch) in "WF")


def _pad(text: str, width: int, right: bool = False) -> str:
    fill = " " * max(0, width - _columns(text))
    return fill + text if right else text + fill


def label_width(names) -> int:
    """The strategy column: 32, or wider when a translated name needs it."""
    return max([32] + [_columns(_(name)) + 1 for name in names])


def _ratio(value: float | None, other: float | None) -> str:
    return f"{value / other:.2f}" if value and other else "-"


def best_peer(name: str, values: dict[str, float], lowest: bool = False) -> float | None:
    """The best value among ``name``'s peer counterparts (the highest rate, or the lowest µs)."""
    got = [values[p] for p in peers.COUNTERPARTS.get(name, ([], ""))[0] if p in values]
    if not got:
        return None
    return min(got) if lowest else max(got)


def header(width: int = 32) -> str:
    cells = [
        (N_("1 client/s"), 10),
        (N_("vs peer"), 7),
        (N_("vs base"), 7),
        (N_("16 procs/s"), 10),
        (N_("vs peer"), 7),
        (N_("server µs"), 9),
        (N_("vs peer"), 7),
        (N_("B/client"), 8),
        (N_("keys"), 4),
        (N_("trips"), 5),
    ]
    return " ".join([_pad(_("strategy"), width)] + [_pad(_(name), width, right=True) for name, width in cells])


def _cell(value, fmt: str, width: int) -> str:
    return f"{value:>{width}{fmt}}" if value else f"{'-':>{width}}"


def table(names, one, many, cost, mem) -> list[str]:
    """The main table, one line per strategy."""
    rate1 = {n: one[n][0] for n in one}
    us = {n: cost[n][0] for n in cost}
    width = label_width(names)
    lines = [header(width)]
    for name in names:
        ours = name.startswith("ours:")
        r1, r16, u = rate1.get(name), many.get(name), us.get(name)
        b, keys = mem.get(name, (None, None))
        lines.append(
            " ".join(
                [
                    _pad(_(name), width),
                    _cell(r1, ",.0f", 10),
                    f"{_ratio(r1, best_peer(name, rate1)) if ours else '-':>7}",
                    f"{_ratio(r1, rate1.get(BASE)):>7}",
                    _cell(r16, ",.0f", 10),
                    f"{_ratio(r16, best_peer(name, many)) if ours else '-':>7}",
                    _cell(u, ".1f", 9),
                    f"{_ratio(u, best_peer(name, us, lowest=True)) if ours else '-':>7}",
                    _cell(b, ",.0f", 8),
                    f"{keys:>4.1f}" if keys is not None else f"{'-':>4}",
                    _cell(one[name][1] if name in one else None, ".2f", 5),
                ]
            )
        )
    return lines


def breakdown(cost, calls) -> list[str]:
    """Per strategy that runs scripts: each command inside them, calls per decision x µs per call."""
    lines = [
        "",
        "inside the scripts: each command, calls per decision x µs per call (commandstats); the rest of "
        "the script's time is Lua and the calls' own cost (see the calibration below)",
    ]
    for name, (top, inner) in cost.items():
        if not inner:
            continue
        parts = ", ".join(
            f"{k.upper()} {c:.2f}x{us:.1f}" for k, (c, us) in sorted(inner.items(), key=lambda kv: -kv[1][0])
        )
        rest = top - sum(c * us for c, us in inner.values())
        lines.append(f"  {name:32} {top:5.1f} µs = {parts}; rest {rest:.1f}")
    return lines


def verdicts(names, one, many, cost) -> list[str]:
    """Each target, met or not, per course limiter."""
    rate1 = {n: one[n][0] for n in one}
    us = {n: cost[n][0] for n in cost}
    lines = [
        "",
        "targets: >= 1.00 x best peer (1 client, 16 procs), server µs <= cheapest peer's, >= 0.90 x baseline (1 client)",
    ]
    for name in (n for n in names if n.startswith("ours:")):
        checks = []
        for label, value, other, ok in [
            ("1 client", rate1.get(name), best_peer(name, rate1), lambda a, b: a >= b),
            ("16 procs", many.get(name), best_peer(name, many), lambda a, b: a >= b),
            ("server µs", us.get(name), best_peer(name, us, lowest=True), lambda a, b: a <= b),
            ("baseline", rate1.get(name), 0.9 * rate1[BASE] if BASE in rate1 else None, lambda a, b: a >= b),
        ]:
            if value and other:
                checks.append(f"{label} {'met' if ok(value, other) else 'MISSED'}")
        lines.append(f"  {name:32} " + ", ".join(checks))
    return lines


def instruction_table(names, ir: dict[str, float], calls: dict[str, float]) -> list[str]:
    """Server instructions per decision (callgrind): steady however busy the machine is."""
    lines = [
        "",
        _("server instructions per decision (valgrind callgrind, thousands), vs the cheapest peer counterpart:"),
    ]
    for name in names:
        if name in ir:
            other = best_peer(name, ir, lowest=True) if name.startswith("ours:") else None
            lines.append(
                "  "
                + _pad(_(name), label_width(names))
                + f" {ir[name] / 1000:6.1f}k {_ratio(ir[name], other) if other else '-':>6}"
            )
    lines.append(
        _("what a script (or a function) costs, and what one redis.call or a 4-number answer adds (thousands):")
    )
    lines.append("  " + "; ".join(_(k) + f" {v / 1000:.1f}k" for k, v in calls.items()))
    return lines


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="throughput on this server instead of a private one")
    ap.add_argument("--seconds", type=float, default=60, help="1 client: seconds in all (default 60)")
    ap.add_argument("--processes", type=int, default=16, help="client processes (default 16)")
    ap.add_argument("--slots", type=int, default=6, help="16 procs: slots per strategy (default 6)")
    ap.add_argument("--slot", type=float, default=0.3, help="16 procs: seconds per slot (default 0.3)")
    ap.add_argument("--decisions", type=int, default=1200, help="server µs: decisions per strategy (default 1200)")
    ap.add_argument("--clients", type=int, default=m.CLIENTS, help="memory: clients (default 1000)")
    ap.add_argument("--only", default="", help="comma-separated words: run the strategies whose name has one")
    ap.add_argument(
        "--measures",
        default="one,procs,cost,memory,instructions",
        help="which measures, comma-separated (default: one,procs,cost,memory,instructions; "
        "instructions needs valgrind)",
    )
    ap.add_argument("--quick", action="store_true", help="fewer and shorter turns")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.slots, args.decisions, args.clients = 15, 2, 240, 200
    return args


def pick(strategies: dict, only: str) -> dict:
    words = [w.strip() for w in only.split(",") if w.strip()]
    return {n: f for n, f in strategies.items() if n == BASE or not words or any(w in n for w in words)}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    with ExitStack() as stack:
        srv = stack.enter_context(private_redis()) if redis_server_binary() else None
        url = args.url or (srv.url if srv else os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
        owned = srv is not None and url == srv.url
        prefix = f"course:bench:{secrets.token_hex(3)}:"
        r = connect(url, prefix=prefix, owned=owned)
        stack.callback(r.cleanup)
        strategies = pick(peers.build(r, url), args.only)
        names = list(strategies)
        want = set(args.measures.split(","))
        one = m.one_client(strategies, args.seconds, between=r.cleanup) if "one" in want else {}
        many = (
            m.many_processes(url, prefix, owned, names, args.slots, args.slot, args.processes)
            if "procs" in want
            else {}
        )
        r.cleanup()
        cost, mem, calls = {}, {}, {}
        if srv:
            rp = r if owned else srv.client(prefix=prefix)
            if "cost" in want:
                cost = m.server_cost(rp, pick(peers.build(rp, srv.url), args.only), args.decisions)
                calls = m.script_calls(rp)
            if "memory" in want:
                mem = m.memory(rp, pick(peers.build(rp, srv.url, peers.LIMIT, 3_600_000), args.only), args.clients)
        print(machine(r))
        print(
            _(
                "{limit} requests per {window} ms per client, bursts of {burst} per client id, strategies taking "
                "turns a burst at a time",
                limit=peers.LIMIT,
                window=peers.WINDOW_MS,
                burst=m.BURST,
            )
        )
        print(
            _(
                "1 client: {seconds} s in all; {procs} procs: median of {slots} slots of {slot} s; server µs: "
                "{decisions} decisions each; memory: {clients} clients at {limit} per hour",
                seconds=f"{args.seconds:g}",
                procs=args.processes,
                slots=args.slots,
                slot=f"{args.slot:g}",
                decisions=f"{args.decisions:,}",
                clients=f"{args.clients:,}",
                limit=peers.LIMIT,
            )
            + "\n"
        )
        print("\n".join(table(names, one, many, cost, mem)))
        print(
            "\nvs peer: against the best counterpart in ratelimit_peers.COUNTERPARTS (decisions/s: ours / fastest "
            "peer, >= 1.00 is as fast or faster; server µs: ours / cheapest peer, <= 1.00 is as cheap or cheaper)"
        )
        print("\n".join(breakdown(cost, calls)))
        if calls:
            print(
                "\nwhat a script (or a function) costs before it does anything, and what one redis.call (command "
                "included) or returning a table of 4 numbers instead of 1 adds to it, µs:"
            )
            print("  " + "; ".join(f"{k} {v:.2f}" for k, v in calls.items()))
        print("\n".join(verdicts(names, one, many, cost)))
        if "instructions" in want and instructions.available():
            print(
                "\n".join(
                    instruction_table(names, *instructions.per_decision(peers.build, lambda s: pick(s, args.only)))
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
