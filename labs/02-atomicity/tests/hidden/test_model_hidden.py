"""Hidden model-based test of lab 02: random call sequences against a small model of the contract.

Hypothesis' stateful testing sends random sequences of transfers and ticket sales (amounts at and
around every boundary, floats with no fractional part, bools, strings, an organiser who changes the
capacity) through the student's functions, compares every reply's value and type and every key of
the run (value, no TTL, no key the contract does not name) with the model, and shrinks a failure to
its shortest sequence, which the message shows.  The seed is fixed (``derandomize``): the same
submission gets the same score on every run.
"""
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule, run_state_machine_as_test

from redis_course.l10n import _
from redis_course.labs.engine.modeltest import ContractModel, model_settings
from redis_course.labs.engine.testing import contract, hint, points

GRADER_CANARY = "grader-canary-02-atomicity-4c8e1a7f"  # the release test proves this never leaves the repo

EXACT = 2**53  # the scripts compare Lua numbers (doubles): the lab promises exact money up to here

SETTINGS = model_settings(40, steps=12)

ACCOUNTS = st.sampled_from(["a", "b", "c"])
AMOUNTS = st.sampled_from([1, 9, 10, 99, 100, 101, 1000, EXACT - 1, EXACT, EXACT + 1, 2**63 - 1, 2**63])
NOT_POSITIVE = [0, -1, -100, -2**63]
NOT_INTS = [2.5, 10.0, 1.0, 0.0, True, False, "10"]
EVENTS = st.sampled_from(["gig", "show"])


class Model(ContractModel):
    """The contract of lab 02 as a dictionary of keys; every rule is one call, checked against it."""

    def __init__(self):
        super().__init__()
        self.keys = {}  # unprefixed key -> the string it holds

    def check_keys(self):
        r = self.redis
        keys = {r.unprefixed(k) for k in r.course_keys()}
        if keys != set(self.keys):
            self.fail(_("the run's keys are {seen}, the contract expects {expected}", seen=sorted(keys),
                        expected=sorted(self.keys)))
        for key, value in self.keys.items():
            now = r.get(r.key(key))
            if now != value:
                self.fail(_("{key} holds {seen!r}, the contract expects {expected!r}", key=key, seen=now,
                            expected=value))
            ttl = r.pttl(r.key(key))
            if ttl != -1:
                self.fail(_("{key} has a TTL of {seen} ms, the contract expects none", key=key, seen=ttl))

    def number(self, key):
        return int(self.keys.get(key, "0"))

    # -- the grader's (and the organiser's) own writes --------------------------------------------
    @initialize(a=st.sampled_from([None, 10, 100, 900, EXACT]), b=st.sampled_from([None, 1, 9, 1000]),
                seats=st.sampled_from([None, 0, 1, 2]))
    def grader_opens_accounts_and_an_event(self, a, b, seats):
        for key, value in (("account:a", a), ("account:b", b), ("event:gig:capacity", seats)):
            if value is not None:
                self.redis.set(self.redis.key(key), value)
                self.keys[key] = str(value)
                self.steps.append(f"SET {key} {value}")

    @rule(name=ACCOUNTS, cents=st.sampled_from([0, 1, 10, 100, 900, EXACT]))
    def grader_sets_balance(self, name, cents):
        self.steps.append(f"SET account:{name} {cents}")
        self.redis.set(self.redis.key("account", name), cents)
        self.keys[f"account:{name}"] = str(cents)

    @rule(event=EVENTS, seats=st.sampled_from([0, 1, 2, 3]))
    def organiser_sets_capacity(self, event, seats):
        self.steps.append(f"SET event:{event}:capacity {seats}")
        self.redis.set(self.redis.key("event", event, "capacity"), seats)
        self.keys[f"event:{event}:capacity"] = str(seats)

    @rule(event=EVENTS)
    def organiser_removes_capacity(self, event):
        self.steps.append(f"DEL event:{event}:capacity")
        self.redis.delete(self.redis.key("event", event, "capacity"))
        self.keys.pop(f"event:{event}:capacity", None)

    # -- transfer ---------------------------------------------------------------------------------
    @rule(src=ACCOUNTS, dst=ACCOUNTS, amount=AMOUNTS)
    def transfer(self, src, dst, amount):
        have, get = self.number(f"account:{src}"), self.number(f"account:{dst}")
        if amount > EXACT and have >= EXACT and src != dst:
            return  # past 2**53 two amounts can be the same double: the lab promises nothing there
        if src == dst:
            expected, item = ("raise", "ValueError"), "transfer-same-account"
        elif amount > have:
            expected, item = ("ok", False), "transfer-insufficient"
        else:
            expected, item = ("ok", True), "transfer-moves"
            self.keys[f"account:{src}"] = str(have - amount)
            self.keys[f"account:{dst}"] = str(get + amount)
        self.expect(self.call("transfer", src, dst, amount), expected, item)

    @rule(src=ACCOUNTS, dst=ACCOUNTS)
    def transfer_everything(self, src, dst):
        have = self.number(f"account:{src}")
        if src != dst and 0 < have <= EXACT:
            self.keys[f"account:{src}"] = "0"
            self.keys[f"account:{dst}"] = str(self.number(f"account:{dst}") + have)
            self.expect(self.call("transfer", src, dst, have), ("ok", True), "transfer-moves")

    @rule(src=ACCOUNTS, dst=ACCOUNTS)
    def transfer_refused_amounts(self, src, dst):
        for amount in NOT_POSITIVE + NOT_INTS:
            self.expect(self.call("transfer", src, dst, amount), ("raise", "ValueError"), "transfer-amount")

    # -- take_ticket ------------------------------------------------------------------------------
    @rule(event=EVENTS)
    def take_ticket(self, event):
        seats, sold = self.number(f"event:{event}:capacity"), self.number(f"event:{event}:sold")
        if sold >= seats:
            expected, item = ("ok", None), "ticket-sold-out"
        else:
            expected, item = ("ok", sold + 1), "ticket-seat-numbers"
            self.keys[f"event:{event}:sold"] = str(sold + 1)
        self.expect(self.call("take_ticket", event), expected, item)


@points(4)
@hint("model")
@contract("transfer-moves", "transfer-returns-bool", "transfer-insufficient", "transfer-missing-account",
          "transfer-amount", "transfer-same-account", "transfer-writes-nothing-when-refused", "transfer-whole-cents",
          "transfer-exact-range", "ticket-seat-numbers", "ticket-sold-out", "ticket-no-capacity",
          "ticket-sold-equals-seat", "ticket-writes-nothing-when-sold-out", "ticket-capacity-untouched",
          "keys-have-no-ttl")
def test_random_call_sequences_follow_the_contract_hidden(lab, redis):
    """Random sequences of transfers and ticket sales give the replies and keys the contract promises."""
    Machine = type("Lab02Model", (Model,), {"fixtures": {"lab": lab, "redis": redis}})
    run_state_machine_as_test(Machine, settings=SETTINGS)
