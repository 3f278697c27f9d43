"""Hidden test of lab 06's costs: what each function sends to Redis, counted outside your process.

The grader's fault proxy sits between your process and its Redis and counts the commands and round
trips of each process (the ``traffic`` fixture); the docstrings' "Cost:" lines are promises too."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points

# what a client sends when it connects, or that is no part of a function's cost
HANDSHAKE = {"HELLO", "CLIENT", "AUTH", "SELECT", "READONLY", "CLUSTER", "COMMAND", "PING"}


def sent(traffic, lab, name, *args):
    """Call ``lab.name(*args)``; the commands it sent (by name, the handshake left out) and its round trips."""
    before = traffic(lab)
    getattr(lab, name)(*args)
    after = traffic(lab)
    commands = {k: n - before["commands"].get(k, 0) for k, n in after["commands"].items()
                if k not in HANDSHAKE and n != before["commands"].get(k, 0)}
    return commands, after["round_trips"] - before["round_trips"]


@points(2)
@hint("cost")
@contract("user-counters-one-mget", "hot-total-one-pipeline", "incr-hot-one-shard", "user-incr-one-command")
def test_each_function_sends_what_its_docstring_costs_hidden(lab, redis, traffic):
    """Each function sends what its docstring's cost says: one INCR, one pipeline of GETs, one INCRBY, one MGET."""
    lab.user_incr(17, "views")                       # your process is started and connected
    for fn, args, want, trips, cost in (
            ("incr_hot", ("home",), {"INCR": 1}, 1, _("one INCR, one round trip")),
            ("hot_total", ("home",), {"GET": 16}, 1, _("16 GETs in one pipeline, one round trip on this one-node cluster")),
            ("user_incr", (17, "likes", 2), {"INCRBY": 1}, 1, _("one INCRBY")),
            ("user_counters", (17, ["views", "likes", "shares"]), {"MGET": 1}, 1, _("one MGET, one round trip"))):
        commands, round_trips = sent(traffic, lab, fn, *args)
        if fn in ("incr_hot", "user_incr"):            # INCR and INCRBY 1 are the same command here
            commands = {"INCR" if fn == "incr_hot" else "INCRBY": sum(commands.values())} \
                if set(commands) <= {"INCR", "INCRBY"} else commands
        # a pipeline the kernel hands over in two reads is still one round trip: one more is allowed
        assert commands == want and round_trips <= trips + (fn == "hot_total"), _(
            "{function}({args}) sent {seen} in {n} round trip(s); its cost is {cost}", function=fn,
            args=", ".join(map(repr, args)),
            seen=commands, n=round_trips, cost=cost)
