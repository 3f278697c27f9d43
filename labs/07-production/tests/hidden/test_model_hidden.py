"""Hidden model-based test of lab 07: random call sequences against a small model of the contract.

Hypothesis' stateful testing sends random sequences of acquisitions, releases and refreshes (limits
and leases of different sizes, holders that hold, held and never held, leases the grader ended
itself, a key of the wrong type), straight and through ``admit`` with either policy, through the
student's functions while the process's clock runs two hours off; it compares every reply's value
and type and every key (members, scores on the server's clock, PTTL) with the model, checks that a
refused argument of the guard sends nothing and that the process keeps one budget client, and
shrinks a failure to its shortest sequence, which the message shows.  Outages (paused, stopped,
slow servers) are the other tests'.  The seed is fixed (``derandomize``): the same submission gets
the same score on every run.
"""
from hypothesis import strategies as st
from hypothesis.stateful import rule, run_state_machine_as_test

from redis_course.l10n import _
from redis_course.labs.engine.modeltest import ContractModel, model_settings
from redis_course.labs.engine.testing import contract, hint, points

GRADER_CANARY = "grader-canary-07-production-9a3e61f4"  # must never appear in a student release

SETTINGS = model_settings(20, steps=12)

HEALTHY_MS = 3_000      # the budget where the server is healthy: a busy grader is no outage
CLOCK_OFFSET_S = -7200  # the student's process sees a clock two hours behind the server's
NAMES = st.sampled_from(["jobs", "api"])
HOLDERS = st.sampled_from(["a", "b", "c", "d"])
LIMITS = st.sampled_from([1, 2, 3])
LEASES = st.sampled_from([30_000, 60_000, 120_000])   # none ends during a run
BAD = st.sampled_from([0, -1])
# connections a process may open during one sequence of calls: the first use of r's pool and of the
# one budget client (a client per call opens one more each time); a delta, so that a sequence replayed
# while Hypothesis shrinks it gives the same verdict
MAX_NEW_CONNECTIONS = 2
# what a client sends when it connects, or that is no part of a call
HANDSHAKE = {"HELLO", "CLIENT", "AUTH", "SELECT", "READONLY", "PING"}


def server_ms(redis):
    sec, usec = redis.time()
    return sec * 1000 + usec // 1000


class Model(ContractModel):
    """The contract of lab 07 as sorted sets of leases and the keys' expiry; every rule is one call."""

    def __init__(self):
        super().__init__()
        self.traffic = self.fixtures["traffic"]
        self.connections = self.traffic(self.lab)["connections"]
        self.live = {}       # name -> {holder: (earliest end, latest end)} in server ms
        self.ended = {}      # name -> {holder: score}: leases the grader ended
        self.expiry = {}     # name -> (earliest, latest) server ms the key expires at; absent: no TTL
        self.wrong = set()   # names whose key the grader made a string

    def timed(self, name, *args):
        """The call, and the server's clock just before it and just after it returned."""
        before = server_ms(self.redis)
        seen = self.call(name, *args)
        return seen, before, server_ms(self.redis)

    def check_keys(self):
        r = self.redis
        expected = {f"sem:{n}" for n in self.wrong}
        expected |= {f"sem:{n}" for n in set(self.live) | set(self.ended) if self.live.get(n) or self.ended.get(n)}
        seen = {r.unprefixed(k) for k in r.course_keys()}
        if seen != expected:
            self.fail(_("the run's keys are {seen}, the contract expects {expected}", seen=sorted(seen),
                        expected=sorted(expected)))
        for key in sorted(expected):
            name = key[len("sem:"):]
            if name in self.wrong:
                continue
            now = {m: s for m, s in r.zrange(r.key(key), 0, -1, withscores=True)}
            want = {**self.ended.get(name, {}), **self.live.get(name, {})}
            wrong = set(now) != set(want) or any(
                not (want[m][0] <= now[m] <= want[m][1] if isinstance(want[m], tuple) else now[m] == want[m])
                for m in now)
            if wrong:
                self.fail(_("{key} holds {seen!r}, the contract expects {expected!r}", key=key, seen=now,
                            expected=want))
            t0 = server_ms(r)
            left = r.pttl(r.key(key))
            t1 = server_ms(r)
            if name not in self.expiry:
                if left != -1:
                    self.fail(_("{key} has a TTL of {seen} ms, the contract expects none", key=key, seen=left))
                continue
            lo, hi = self.expiry[name]
            low, high = lo - t1 - 2, hi - t0 + 2
            if not low <= left <= high:
                self.fail(_("{key} has {seen} ms left, the contract expects {low} to {high} ms: the key expires "
                            "with its longest lease, in ms, never sooner", key=key, seen=left, low=max(0, low),
                            high=high))
        connections = self.traffic(self.lab)["connections"] - self.connections
        if connections > MAX_NEW_CONNECTIONS:
            self.fail(_("your process has opened {n} connections to Redis during these calls: make the budget "
                        "client once per process and keep it", n=connections))

    # -- changes ------------------------------------------------------------------------------------
    def leased(self, name, holder, lease, before, after):
        self.live.setdefault(name, {})[holder] = (before + lease, after + lease)
        lo, hi = self.expiry.get(name, (0, 0))
        self.expiry[name] = (max(lo, before + lease), max(hi, after + lease))

    def emptied(self, name):
        if not self.live.get(name) and not self.ended.get(name):
            self.expiry.pop(name, None)   # the last member gone, the key with it

    def acquire_expected(self, name, holder, limit):
        live = self.live.get(name, {})
        return holder in live or len(live) < limit

    def after_acquire(self, name, holder, lease, granted, before, after):
        self.ended.pop(name, None)
        if granted:
            self.leased(name, holder, lease, before, after)
        self.emptied(name)

    # -- the grader's own writes ------------------------------------------------------------------
    @rule(name=NAMES, holder=HOLDERS, ago=st.sampled_from([1, 500, 40_000]))
    def grader_ends_a_lease(self, name, holder, ago):
        if name in self.wrong:
            return
        score = server_ms(self.redis) - ago
        self.steps.append(_("the grader gives {holder} a lease that ended {ago} ms ago", holder=holder, ago=ago))
        self.redis.zadd(self.redis.key("sem", name), {holder: score})
        self.live.get(name, {}).pop(holder, None)
        self.ended.setdefault(name, {})[holder] = float(score)

    @rule(name=NAMES)
    def grader_writes_a_string(self, name):
        self.steps.append(f"SET sem:{name} 'not a sorted set'")
        self.redis.set(self.redis.key("sem", name), "not a sorted set")
        self.live.pop(name, None)
        self.ended.pop(name, None)
        self.expiry.pop(name, None)
        self.wrong.add(name)

    @rule(name=NAMES)
    def grader_deletes(self, name):
        self.steps.append(f"DEL sem:{name}")
        self.redis.delete(self.redis.key("sem", name))
        for d in (self.live, self.ended, self.expiry):
            d.pop(name, None)
        self.wrong.discard(name)

    # -- the limiter ------------------------------------------------------------------------------
    @rule(name=NAMES, holder=HOLDERS, limit=LIMITS, lease=LEASES)
    def acquire(self, name, holder, limit, lease):
        if name in self.wrong:
            self.expect(self.call("acquire", name, holder, limit, lease), ("raise", "ResponseError"),
                        "guarded-bugs-raised")
            return
        granted = self.acquire_expected(name, holder, limit)
        item = "acquire-holder-keeps-slot" if holder in self.live.get(name, {}) else "acquire-up-to-limit"
        seen, before, after = self.timed("acquire", name, holder, limit, lease)
        self.after_acquire(name, holder, lease, granted, before, after)
        self.expect(seen, ("ok", granted), item)

    @rule(name=NAMES, holder=HOLDERS, bad=BAD, which=st.sampled_from(["limit", "lease"]))
    def acquire_refused(self, name, holder, bad, which):
        args = (name, holder, bad, 60_000) if which == "limit" else (name, holder, 2, bad)
        self.expect(self.call("acquire", *args), ("raise", "ValueError"), "limiter-arguments")

    @rule(name=NAMES, holder=HOLDERS)
    def release(self, name, holder):
        if name in self.wrong:
            self.expect(self.call("release", name, holder), ("raise", "ResponseError"), "guarded-bugs-raised")
            return
        held = holder in self.live.get(name, {})
        item = "release-holder-only" if held else "release-ended-false"
        seen = self.call("release", name, holder)
        self.live.get(name, {}).pop(holder, None)
        if holder in self.ended.get(name, {}) and self.redis.zscore(self.redis.key("sem", name), holder) is None:
            del self.ended[name][holder]    # an ended lease removed by its release: either is the contract
        self.emptied(name)
        self.expect(seen, ("ok", held), item)

    @rule(name=NAMES, holder=HOLDERS, lease=st.one_of(LEASES, BAD))
    def refresh(self, name, holder, lease):
        if lease < 1:
            self.expect(self.call("refresh", name, holder, lease), ("raise", "ValueError"), "limiter-arguments")
            return
        if name in self.wrong:
            self.expect(self.call("refresh", name, holder, lease), ("raise", "ResponseError"), "guarded-bugs-raised")
            return
        held = holder in self.live.get(name, {})
        seen, before, after = self.timed("refresh", name, holder, lease)
        if held:
            self.leased(name, holder, lease, before, after)
        self.expect(seen, ("ok", held), "refresh-extends" if held else "refresh-never-revives")

    # -- the guard, while Redis answers -------------------------------------------------------------
    @rule(name=NAMES, holder=HOLDERS, limit=LIMITS, lease=LEASES, policy=st.sampled_from(["open", "closed"]),
          cooldown=st.sampled_from([None, 0, 500]))
    def admit(self, name, holder, limit, lease, policy, cooldown):
        args = (name, holder, limit, lease, HEALTHY_MS, policy) + (() if cooldown is None else (cooldown,))
        if name in self.wrong:
            self.expect(self.call("admit", *args), ("raise", "ResponseError"), "guarded-bugs-raised")
            return
        granted = self.acquire_expected(name, holder, limit)
        seen, before, after = self.timed("admit", *args)
        self.after_acquire(name, holder, lease, granted, before, after)
        self.expect(seen, ("ok", {"admitted": granted, "by": "redis"}), "guarded-redis-answer")

    @rule(name=NAMES, holder=HOLDERS, bad=st.sampled_from([("policy", "sometimes"), ("policy", "local"),
                                                           ("budget", 0), ("budget", -5), ("cooldown", -1)]))
    def admit_refused(self, name, holder, bad):
        what, value = bad
        args = [name, holder, 2, 60_000, HEALTHY_MS, "open", 0]
        args[{"policy": 5, "budget": 4, "cooldown": 6}[what]] = value
        before = self.traffic(self.lab)["commands"]
        self.expect(self.call("admit", *args), ("raise", "ValueError"), "guarded-arguments")
        after = self.traffic(self.lab)["commands"]
        sent = sorted(k for k, n in after.items() if k not in HANDSHAKE and n != before.get(k, 0))
        if sent:
            self.fail(_("{call} raised ValueError after sending {seen} to Redis: a bad argument of the guard is "
                        "refused before anything is sent", call=self.steps[-1], seen=sent))


@points(4)
@hint("model")
@contract("acquire-up-to-limit", "acquire-score", "acquire-drops-ended", "acquire-holder-keeps-slot",
          "acquire-server-clock", "release-holder-only", "release-once", "release-ended-false", "refresh-extends",
          "refresh-never-revives", "key-ttl-longest-lease", "limiter-arguments", "replies-are-bools", "keys-named",
          "guarded-redis-answer", "guarded-bugs-raised", "guarded-arguments", "guarded-one-client")
def test_random_call_sequences_follow_the_contract_hidden(lab, redis, traffic):
    """Random sequences of acquisitions, releases, refreshes and admissions give the replies, scores and TTLs the contract promises."""
    Machine = type("Lab07Model", (Model,), {"fixtures": {"lab": lab, "redis": redis, "traffic": traffic}})
    lab.faults.set_machine_clock(CLOCK_OFFSET_S)
    try:
        run_state_machine_as_test(Machine, settings=SETTINGS)
    finally:
        lab.faults.set_machine_clock(None)
