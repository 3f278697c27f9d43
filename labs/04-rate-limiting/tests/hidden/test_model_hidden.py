"""Hidden model-based test of lab 04: random request sequences against a small model of the contract.

Hypothesis' stateful testing sends requests of random cost to the three limiters, for clients with
two or three limits given in any order (the longest window first, last or in the middle), with the
caller's clock stepping by amounts at and around every window's edge and by exactly the
``retry_after_ms`` the last denial gave (and one ms less); it compares every reply's value and type
with a model of each limiter (every limit evaluated, the tightest ``remaining``, the longest wait),
checks that each client has one key per limiter and that its TTL, on the server's clock, lasts
while the state matters (the longest limit's) plus the slack and never longer than the longest
window plus the slack.  A failure shrinks to its shortest sequence, which the message shows.  The
seed is fixed (``derandomize``): the same submission gets the same score on every run.
"""
import math
import time

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule, run_state_machine_as_test

from redis_course.l10n import _
from redis_course.labs.engine.modeltest import ContractModel, model_settings, same, shown
from redis_course.labs.engine.testing import contract, hint, points

GRADER_CANARY = "grader-canary-04-rate-limiting-3b9e71c4"  # must never appear in a student release

SETTINGS = model_settings(15, steps=10)

T0 = 1_800_000_000_000       # ms: a multiple of every window below
SLACK = 60_000
NAMES = ("fixed_window", "sliding_window", "token_bucket")
# limits lists whose longest window is first, last or in the middle, and whose tightest limit is not first
LIMITS = [[[4, 1000], [6, 10_000]], [[6, 10_000], [4, 1000]], [[5, 2000], [3, 500], [8, 10_000]],
          [[8, 10_000], [5, 2000], [3, 500]], [[3, 500], [8, 10_000], [5, 2000]]]
SERVER_LIMITS = [[3, 3_600_000], [2, 7_200_000]]   # now_ms None: no unit leaves while the test runs
STEPS = st.sampled_from([0, 1, 250, 499, 500, 501, 999, 1000, 1001, 1999, 2000, 4000, 9999, 10_000])


def fixed(state, limits, cost, now):
    """The fixed window: (allowed, remaining, retry, the state after, ms its state still matters)."""
    fits, wait, keep, new = None, 0, 0, []
    for i, (cap, span) in enumerate(limits):
        k, start = now // span, now - now % span
        used = state[i][1] if state and state[i][0] == k else 0
        new.append((k, used + cost))
        fits = min(cap - used, fits if fits is not None else cap)
        if used + cost > cap:
            wait = max(wait, start + span - now)
        keep = max(keep, start + span - now)
    if wait:
        return False, max(0, fits), wait, state, None
    return True, fits - cost, 0, new, keep


def sliding(log, limits, cost, now):
    """The sliding log (one time per unit allowed), trimmed to the longest window."""
    longest = max(span for _cap, span in limits)
    log = [t for t in log or [] if t > now - longest]
    fits, wait = None, 0
    for cap, span in limits:
        window = sorted(t for t in log if t > now - span)
        fits = min(cap - len(window), fits if fits is not None else cap)
        if len(window) + cost > cap:
            wait = max(wait, window[len(window) + cost - cap - 1] + span - now)
    if wait:
        return False, max(0, fits), wait, log, None
    return True, fits - cost, 0, log + [now] * cost, longest


def bucket(state, limits, cost, now):
    """Token buckets, levels in tokens * window (exact integers), refilled at cap per ms."""
    last, levels = state if state else (now, [cap * span for cap, span in limits])
    since = max(0, now - last)
    level = [min(cap * span, levels[i] + since * cap) for i, (cap, span) in enumerate(limits)]
    fits = min(level[i] // span for i, (_cap, span) in enumerate(limits))
    wait = max([math.ceil((cost * span - level[i]) / cap) for i, (cap, span) in enumerate(limits)
                if cost * span > level[i]] or [0])
    if wait:
        return False, fits, wait, state, None
    left = [level[i] - cost * span for i, (_cap, span) in enumerate(limits)]
    refill = max(math.ceil((cap * span - left[i]) / cap) for i, (cap, span) in enumerate(limits))
    return True, fits - cost, 0, (max(now, last), left), refill


MODELS = {"fixed_window": fixed, "sliding_window": sliding, "token_bucket": bucket}


class Model(ContractModel):
    """The contract of lab 04 as the three limiters' states; every rule is one request, checked against it."""

    def __init__(self):
        super().__init__()
        self.now = T0
        self.limits = {}
        self.state = {}           # (name, client) -> the model's state
        self.ttl = {}             # (name, client) -> (ms the state matters, monotonic time before the write)
        self.last_retry = 0
        self.slop = 0             # ms the longest call on the server's clock took

    @initialize(a=st.sampled_from(range(len(LIMITS))), b=st.sampled_from(range(len(LIMITS))))
    def clients_get_their_limits(self, a, b):
        self.limits = {"a": LIMITS[a], "b": LIMITS[b], "srv": SERVER_LIMITS}

    def client_id(self, name, client):
        return f"{name[:2]}-{client}"          # each limiter its own clients: a key names one limiter

    def check_keys(self):
        r = self.redis
        keys = {r.unprefixed(k) for k in r.course_keys()}
        for (name, client), (matters, before, slack) in self.ttl.items():
            cid = self.client_id(name, client)
            mine = sorted(k for k in keys if cid in k)
            if len(mine) != 1:
                self.fail(_("{name}: client {client} has the keys {keys}, the contract expects one key per client and "
                            "limiter", name=name, client=cid, keys=mine))
            left = r.pttl(r.key(mine[0]))
            elapsed = (time.monotonic() - before) * 1000
            longest = max(span for _cap, span in self.limits[client])
            low, high = matters + slack - elapsed - 5, longest + slack
            if not low <= left <= high:
                self.fail(_("{name}: {key} has {seen} ms left, the contract expects {low} to {high} ms: set on the "
                            "last write to while its state matters ({matters} ms) plus {slack} ms of slack, never "
                            "longer than the longest window plus the slack", name=name, key=mine[0], seen=left,
                            low=max(0, int(low)), high=high, matters=matters, slack=slack))
            if name == "sliding_window" and r.type(r.key(mine[0])) == "zset":
                size, most = r.zcard(r.key(mine[0])), max(cap for cap, _span in self.limits[client])
                if size > most:
                    self.fail(_("{name}: {key} holds {seen} entries, the contract expects at most {most}: units that "
                                "left the longest window are trimmed", name=name, key=mine[0], seen=size, most=most))
            keys.discard(mine[0])
        if keys:
            self.fail(_("the run holds keys no client's state needs: {keys}", keys=sorted(keys)))

    # -- the caller's clock -----------------------------------------------------------------------
    @rule(step=STEPS)
    def clock_moves(self, step):
        self.now += step
        self.steps.append(_("the clock moves {step} ms", step=step))

    @rule(less=st.sampled_from([1, 0]))
    def clock_moves_to_the_retry(self, less):
        step = max(0, self.last_retry - less)
        self.now += step
        self.steps.append(_("the clock moves {step} ms", step=step))

    # -- requests ---------------------------------------------------------------------------------
    @rule(name=st.sampled_from(NAMES), client=st.sampled_from(["a", "b"]), cost=st.sampled_from([1, 2, 3]),
          then=st.sampled_from([1, 2, 3]), gap=st.sampled_from([0, 1, 137]), step=STEPS)
    def burst_then_the_retry(self, name, client, cost, then, gap, step):
        """Requests of ``cost``, ``gap`` ms apart, until one is denied; then a request of ``then`` 1 ms before
        its retry_after_ms and at it (units of different times: a denial may need several to leave)."""
        for _i in range(10):
            if not self.send(name, client, cost):
                break
            self.now += gap
            if gap:
                self.steps.append(_("the clock moves {step} ms", step=gap))
        if then != cost:
            self.send(name, client, then)
        for less in (1, 0):
            self.now += max(0, self.last_retry - less)
            self.steps.append(_("the clock moves {step} ms", step=max(0, self.last_retry - less)))
            self.send(name, client, then)
        self.clock_moves(step)

    @rule(name=st.sampled_from(NAMES), client=st.sampled_from(["a", "b"]), cost=st.sampled_from([1, 2, 3]))
    def request(self, name, client, cost):
        self.send(name, client, cost)

    def send(self, name, client, cost):
        """One request, checked against the model; whether it was allowed."""
        limits = self.limits[client]
        cost = min(cost, min(cap for cap, _span in limits))
        allowed, remaining, retry, state, matters = MODELS[name](self.state.get((name, client)), limits, cost,
                                                                 self.now)
        before = time.monotonic()
        seen = self.call(name, self.client_id(name, client), limits, cost, self.now)
        self.state[(name, client)] = state
        if allowed:
            self.ttl[(name, client)] = (matters, before, SLACK)
        else:
            self.last_retry = retry
        item = {"fixed_window": "fixed-window", "sliding_window": "sliding-window",
                "token_bucket": "token-bucket"}[name]
        self.expect(seen, ("ok", {"allowed": allowed, "remaining": remaining, "retry_after_ms": retry}), item)
        return allowed

    # -- the server's clock -----------------------------------------------------------------------
    @rule(name=st.sampled_from(NAMES), cost=st.sampled_from([1, 2]))
    def request_on_the_servers_clock(self, name, cost):
        """now_ms None: the model decides at the server's time before and after the call (windows of an
        hour and two: a second of the test cannot move a unit out), both must agree with the reply."""
        limits = SERVER_LIMITS
        state = self.state.get((name, "srv"))
        before_mono, before = time.monotonic(), _server_ms(self.redis)
        seen = self.call(name, self.client_id(name, "srv"), limits, cost, None)
        after = _server_ms(self.redis)
        first = MODELS[name](state, limits, cost, before)
        last = MODELS[name](state, limits, cost, after)
        if first[:2] != last[:2]:
            # an hour's edge fell inside the call: the model cannot say which side it ran on; start afresh
            for key in self.redis.course_keys(f"*{self.client_id(name, 'srv')}*"):
                self.redis.delete(key)
            self.state.pop((name, "srv"), None)
            self.ttl.pop((name, "srv"), None)
            return
        allowed, remaining, _retry, new, matters = first
        # the units of an earlier call went in at some moment of that call: a wait is that much less exact
        self.slop = max(self.slop, after - before)
        low, high = (0, 0) if allowed else (min(first[2], last[2]) - self.slop, max(first[2], last[2]) + self.slop)
        kind, got = seen
        ok = kind == "ok" and isinstance(got, dict) and same(sorted(got), ["allowed", "remaining", "retry_after_ms"]) \
            and same(got["allowed"], allowed) and same(got["remaining"], remaining) \
            and isinstance(got["retry_after_ms"], int) and not isinstance(got["retry_after_ms"], bool) \
            and low <= got["retry_after_ms"] <= high
        if not ok:
            self.fail(_("{call} gave {seen}, the contract ({item}) expects allowed {allowed}, remaining {remaining} "
                        "and a wait of {low} to {high} ms, decided on the server's clock", call=self.steps[-1],
                        seen=shown(seen), item="server-clock", allowed=allowed, remaining=remaining,
                        low=low, high=high))
        self.state[(name, "srv")] = new
        if allowed:
            self.ttl[(name, "srv")] = (matters - (after - before), before_mono, 0)
        self.check_keys()


def _server_ms(redis):
    sec, usec = redis.time()
    return sec * 1000 + usec // 1000


@points(4)
@hint("model")
@contract("reply-shape", "all-limits-checked", "all-or-nothing", "remaining-tightest", "retry-longest-wait",
          "retry-exact", "cost-units", "fixed-window", "sliding-window", "token-bucket", "one-key-per-client",
          "ttl-while-it-matters", "ttl-never-longer", "ttl-slack", "other-keys-untouched", "sliding-memory",
          "server-clock")
def test_random_request_sequences_follow_the_contract_hidden(lab, redis):
    """Random requests, costs, limits in any order and clock steps give the replies, keys and TTLs the contract promises."""
    Machine = type("Lab04Model", (Model,), {"fixtures": {"lab": lab, "redis": redis}})
    run_state_machine_as_test(Machine, settings=SETTINGS)
