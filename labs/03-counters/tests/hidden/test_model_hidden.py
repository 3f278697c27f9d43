"""Hidden model-based test of lab 03: random call sequences against a small model of the contract.

Hypothesis' stateful testing sends random sequences of views and reads (the caller's clock stepping
forward and backward, across UTC midnight to the millisecond, TTLs of different sizes for the same
key, a machine time zone far from UTC) through the student's functions, compares every reply's
value and type and every key of the run (value, score, TTL on the server's clock, no key the
contract does not name) with the model, and shrinks a failure to its shortest sequence, which the
message shows.  The seed is fixed (``derandomize``): the same submission gets the same score on
every run.
"""
import time
from datetime import datetime, timezone

from hypothesis import strategies as st
from hypothesis.stateful import rule, run_state_machine_as_test

from redis_course.l10n import _
from redis_course.labs.engine.modeltest import ContractModel, model_settings
from redis_course.labs.engine.testing import contract, hint, points

GRADER_CANARY = "grader-canary-03-counters-5d1f9b62"  # must never appear in a student release

RETENTION_MS = 8 * 24 * 3600 * 1000
START = datetime(2026, 3, 5, 23, 59, 58, tzinfo=timezone.utc).timestamp()  # 2 s before a UTC midnight

SETTINGS = model_settings(25, steps=12)

PAGES = st.sampled_from(["home", "about", "blog"])
# TTLs a key can be given: sizes a minute apart, one with half a second (whole seconds would cut it)
TTLS = st.sampled_from([RETENTION_MS, 86_400_000, 3_600_000, 61_500, None])
STEPS = st.sampled_from([0.001, 1, 2, 59.999, 3600, 86400, -1, -86400, -0.5, 6 * 86400, 7 * 86400])


def day(now):
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d")


class Model(ContractModel):
    """The contract of lab 03 as counters, rankings and TTLs; every rule is one call, checked against it."""

    def __init__(self):
        super().__init__()
        self.now = START
        self.views = {}   # (page, day) -> views
        self.ttl = {}     # unprefixed key -> (ttl_ms, monotonic time before the call that created it,
        #                                     monotonic time after it returned)

    def call(self, name, *args):
        """The call without its None arguments (the default they stand for)."""
        return super().call(name, *[a for a in args if a is not None])

    def model_keys(self):
        out = {}
        for (page, d), n in self.views.items():
            out[f"views:{page}:{d}"] = str(n)
        return out

    def check_keys(self):
        r = self.redis
        counters = self.model_keys()
        rankings = {}
        for (page, d), n in self.views.items():
            rankings.setdefault(f"top:{d}", {})[page] = n
        expected = set(counters) | set(rankings)
        seen = {r.unprefixed(k) for k in r.course_keys()}
        if seen != expected:
            self.fail(_("the run's keys are {seen}, the contract expects {expected}", seen=sorted(seen),
                        expected=sorted(expected)))
        for key, value in counters.items():
            now = r.get(r.key(key))
            if now != value:
                self.fail(_("{key} holds {seen!r}, the contract expects {expected!r}", key=key, seen=now,
                            expected=value))
        for key, members in rankings.items():
            now = {m: s for m, s in r.zrange(r.key(key), 0, -1, withscores=True)}
            if now != {m: float(n) for m, n in members.items()}:
                self.fail(_("{key} holds {seen!r}, the contract expects {expected!r}", key=key, seen=now,
                            expected=members))
        for key in expected:
            ttl_ms, before, after = self.ttl[key]
            t0 = time.monotonic()
            left = r.pttl(r.key(key))
            t1 = time.monotonic()
            # Redis counts from the moment it ran the command that created the key (between the
            # grader's clock before that call and after it returned) to the moment it answered PTTL
            # (between t0 and t1); 2 ms for rounding
            low, high = ttl_ms - (t1 - before) * 1000 - 2, ttl_ms - (t0 - after) * 1000 + 2
            if not low <= left <= high:
                self.fail(_("{key} has {seen} ms left, the contract expects {low} to {high} ms: the TTL given "
                            "when the key was created ({ttl} ms), counted on the server's clock, never extended",
                            key=key, seen=left, low=max(0, int(low)), high=int(high), ttl=ttl_ms))

    # -- the caller's clock -----------------------------------------------------------------------
    @rule(step=STEPS)
    def clock_moves(self, step):
        self.now += step
        self.steps.append(_("the clock moves {step} s", step=step))

    # -- record_view ------------------------------------------------------------------------------
    @rule(page=PAGES, ttl_ms=TTLS)
    def record_view(self, page, ttl_ms):
        d = day(self.now)
        n = self.views.get((page, d), 0) + 1
        before = time.monotonic()
        seen = self.call("record_view", page, self.now, ttl_ms)
        after = time.monotonic()
        given = RETENTION_MS if ttl_ms is None else ttl_ms
        for key in (f"views:{page}:{d}", f"top:{d}"):
            self.ttl.setdefault(key, (given, before, after))
        self.views[(page, d)] = n
        self.expect(seen, ("ok", n), "record-view-returns-count")

    # -- reads ------------------------------------------------------------------------------------
    @rule()
    def day_of(self):
        self.expect(self.call("day_of", self.now), ("ok", day(self.now)), "day-of-utc")

    @rule(page=PAGES)
    def views_today(self, page):
        expected = self.views.get((page, day(self.now)), 0)
        self.expect(self.call("views_today", page, self.now), ("ok", expected), "views-today")

    @rule(page=PAGES)
    def last_7_days(self, page):
        expected = [self.views.get((page, day(self.now - 86400 * back)), 0) for back in range(6, -1, -1)]
        self.expect(self.call("last_7_days", page, self.now), ("ok", expected), "last-7-days")

    @rule(n=st.sampled_from([None, 0, 1, 2, 3, 5]))
    def top_pages(self, n):
        d = day(self.now)
        ranked = sorted(((page, v) for (page, dd), v in self.views.items() if dd == d),
                        key=lambda pv: (pv[1], pv[0]), reverse=True)
        expected = [[page, v] for page, v in ranked[:3 if n is None else n]]
        self.expect(self.call("top_pages", self.now, n), ("ok", expected), "top-pages")


@points(4)
@hint("model")
@contract("day-of-utc", "record-view-returns-count", "record-view-keys", "ttl-on-creation", "ttl-never-extended",
          "ttl-milliseconds", "ttl-server-clock", "views-today", "last-7-days", "top-pages", "top-pages-ties",
          "top-pages-n", "reading-creates-nothing", "replies-are-ints", "machine-zone-ignored")
def test_random_call_sequences_follow_the_contract_hidden(lab, redis):
    """Random sequences of views, reads and clock steps give the replies, keys and TTLs the contract promises."""
    Machine = type("Lab03Model", (Model,), {"fixtures": {"lab": lab, "redis": redis}})
    lab.faults.set_machine_timezone("Pacific/Kiritimati")  # UTC+14: every local date differs from UTC's
    try:
        run_state_machine_as_test(Machine, settings=SETTINGS)
    finally:
        lab.faults.set_machine_timezone(None)
