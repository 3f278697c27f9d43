"""Hidden model-based test of lab 06: random call sequences against a small model of the contract.

Hypothesis' stateful testing sends random sequences of hits, reads, per-user increments (negative and
zero ones too), requests and their retries, and the grader's own writes to shards, through the
student's functions; it compares every reply's value and type and every key of the run (name, value,
TTL, slot) with the model and shrinks a failure to its shortest sequence, which the message shows.
A command across two slots is refused by the grader's server (CROSSSLOT), so it shows as an error
where the model expects a reply.  The seed is fixed (``derandomize``): the same submission gets the
same score on every run.
"""
import time

from hypothesis import strategies as st
from hypothesis.stateful import rule, run_state_machine_as_test

from redis_course.cluster import key_slot
from redis_course.l10n import _
from redis_course.labs.engine.modeltest import ContractModel, model_settings
from redis_course.labs.engine.testing import contract, hint, points

GRADER_CANARY = "grader-canary-06-cluster-41c7d0e9"  # must never appear in a student release

SETTINGS = model_settings(25, steps=12)

HOT = {"home": 16, "small": 4}          # a hot counter and its shards (16: the default, not passed)
USERS = st.sampled_from([17, 18, "alice"])
COUNTERS = st.sampled_from(["views", "likes", "shares"])
BYS = st.sampled_from([None, 1, 5, -3, 0, 2**40])
READS = st.sampled_from([[], ["views"], ["views", "likes", "shares"], ["likes", "nothing"]])
NAMES = st.sampled_from(["orders", "signups"])
# a request id stands for one request: its retries repeat its arguments (None: the default)
REQUESTS = {"r1": (None, None), "r2": (7, 60), "r3": (2, None), "r4": (-1, 120)}


class Model(ContractModel):
    """The contract of lab 06 as counters, markers and slots; every rule is one call, checked against it."""

    def __init__(self):
        super().__init__()
        self.hot = {name: 0 for name in HOT}    # hits counted, grader's writes included
        self.extra = {}                         # keys the grader wrote that no function may touch
        self.users = {}                         # (user, counter) -> value
        self.counters = {}                      # name -> value
        self.markers = {}                       # (name, request id) -> (answer, ttl_s)

    def clean(self):
        for k in self.redis.course_keys():      # one by one: a cluster refuses a DEL across slots
            self.redis.delete(k)

    def call(self, name, *args):
        """The call without its trailing None arguments (the defaults they stand for)."""
        args = list(args)
        while args and args[-1] is None:
            args.pop()
        return super().call(name, *args)

    def check_keys(self):
        r = self.redis
        plain = {f"{{user:{u}}}:{c}": str(v) for (u, c), v in self.users.items()}
        plain.update({f"counter:{{{n}}}": str(v) for n, v in self.counters.items()})
        plain.update(self.extra)
        markers = {f"counter:{{{n}}}:req:{rid}": (ttl, at) for (n, rid), (_v, ttl, at) in self.markers.items()}
        shards = {f"hot:{name}:{i}": name for name, n in HOT.items() for i in range(n)}
        seen = {r.unprefixed(k) for k in r.course_keys()}
        stray = seen - set(plain) - set(markers) - set(shards)
        missing = (set(plain) | set(markers)) - seen
        if stray or missing:
            self.fail(_("the run's keys are {seen}, the contract expects {expected}", seen=sorted(seen),
                        expected=sorted(set(plain) | set(markers) | {f"hot:{n}:<0..{HOT[n] - 1}>" for n in HOT})))
        totals = dict.fromkeys(HOT, 0)
        for key in seen & set(shards):
            totals[shards[key]] += int(r.get(r.key(key)))
        for name, total in totals.items():
            if total != self.hot[name]:
                self.fail(_("{key} holds {seen!r}, the contract expects {expected!r}",
                            key=f"hot:{name}:0..{HOT[name] - 1}", seen=total, expected=self.hot[name]))
        for key, value in plain.items():
            now = r.get(r.key(key))
            if now != value:
                self.fail(_("{key} holds {seen!r}, the contract expects {expected!r}", key=key, seen=now,
                            expected=value))
        for key in seen:
            left = r.ttl(r.key(key))
            if key in markers:
                ttl, at = markers[key]
                low = max(1, int(ttl - (time.monotonic() - at)) - 1)   # whole seconds, counted since the request
                if not low <= left <= ttl:
                    self.fail(_("{key} has {seen} s left, the contract expects {low} to {ttl} s: a marker expires "
                                "ttl_s seconds after its request", key=key, seen=left, low=low, ttl=ttl))
            elif left != -1:
                self.fail(_("{key} has a TTL of {seen} ms, the contract expects none", key=key,
                            seen=r.pttl(r.key(key))))
        groups = {}
        for key in seen - set(shards):
            group = key.split("}")[0] + "}"         # {user:17}, counter:{orders}
            groups.setdefault(group, set()).add(key_slot(r.key(key)))
        for group, slots in groups.items():
            if len(slots) != 1:
                self.fail(_("expected the keys of {group} in one slot, saw them in {n} slots", group=group,
                            n=len(slots)))

    # -- the hot counter --------------------------------------------------------------------------
    @rule(name=st.sampled_from(sorted(HOT)))
    def incr_hot(self, name):
        seen = self.call("incr_hot", name, None if HOT[name] == 16 else HOT[name])
        self.hot[name] += 1
        self.expect(seen, ("ok", None), "incr-hot-returns-none")

    @rule(shard=st.sampled_from([0, 3]), by=st.sampled_from([10, 1]))
    def grader_hits_a_shard(self, shard, by):
        self.steps.append(f"INCRBY hot:small:{shard} {by}")
        self.redis.incrby(self.redis.key("hot", "small", shard), by)
        self.hot["small"] += by

    @rule()
    def grader_writes_past_the_shards(self):
        self.steps.append("SET hot:small:4 1000")
        self.redis.set(self.redis.key("hot", "small", 4), 1000)
        self.extra["hot:small:4"] = "1000"

    @rule(name=st.sampled_from(sorted(HOT) + ["never"]))
    def hot_total(self, name):
        shards = HOT.get(name, 16)
        seen = self.call("hot_total", name, None if shards == 16 else shards)
        self.expect(seen, ("ok", self.hot.get(name, 0)), "hot-total-exact")

    # -- a user's counters ------------------------------------------------------------------------
    @rule(user=USERS, counter=COUNTERS, by=BYS)
    def user_incr(self, user, counter, by):
        value = self.users.get((user, counter), 0) + (1 if by is None else by)
        seen = self.call("user_incr", user, counter, by)
        self.users[(user, counter)] = value
        self.expect(seen, ("ok", value), "user-incr-returns-new")

    @rule(user=USERS, counters=READS)
    def user_counters(self, user, counters):
        expected = {c: self.users.get((user, c), 0) for c in counters}
        self.expect(self.call("user_counters", user, counters), ("ok", expected), "user-counters-values")

    # -- a request counted once ---------------------------------------------------------------------
    @rule(name=NAMES, rid=st.sampled_from(sorted(REQUESTS)))
    def incr_once(self, name, rid):
        by, ttl = REQUESTS[rid]
        if (name, rid) in self.markers:
            expected, item = self.markers[(name, rid)][0], "incr-once-retry"
        else:
            expected = self.counters.get(name, 0) + (1 if by is None else by)
            item = "incr-once-first"
        at = time.monotonic()
        seen = self.call("incr_once", name, rid, by, ttl)
        self.counters[name] = self.counters.get(name, 0) if item == "incr-once-retry" else expected
        self.markers.setdefault((name, rid), (expected, 3600 if ttl is None else ttl, at))
        self.expect(seen, ("ok", expected), item)


@points(4)
@hint("model")
@contract("incr-hot-returns-none", "hot-total-exact", "hot-total-own-shards", "user-incr-returns-new",
          "user-keys-one-slot", "user-counters-values", "incr-once-first", "incr-once-retry", "incr-once-per-counter",
          "incr-once-keys", "incr-once-marker-ttl", "no-cross-slot", "replies-are-ints", "keys-named",
          "reading-creates-nothing")
def test_random_call_sequences_follow_the_contract_hidden(lab, redis):
    """Random sequences of hits, reads, increments and retried requests give the replies, keys, TTLs and slots the contract promises."""
    Machine = type("Lab06Model", (Model,), {"fixtures": {"lab": lab, "redis": redis}})
    run_state_machine_as_test(Machine, settings=SETTINGS)
