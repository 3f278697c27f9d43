"""Hidden model-based test of lab 05: random call sequences against a small model of the contract.

Hypothesis' stateful testing schedules, claims, acknowledges, fails and recovers tasks with the
caller's clock stepping by amounts at and around every lease's end and every due time (one
millisecond before, at, after), acks and fails from live, stale, forged and unknown claims, and
``max_attempts`` of 1, 2 and 3; it compares every reply's value and type and every key of the queue
(each hash's fields, each sorted set's members and scores) with the model, and flushes usage the
grader counts, comparing the ledger.  A failure shrinks to its shortest sequence, which the message
shows.  The seed is fixed (``derandomize``): the same submission gets the same score on every run.
"""
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule, run_state_machine_as_test

from redis_course.l10n import _
from redis_course.labs.engine.modeltest import ContractModel, model_settings
from redis_course.labs.engine.testing import contract, hint, points

GRADER_CANARY = "grader-canary-05-durable-7d3f90b2"  # the release test proves this never leaves the repo

SETTINGS = model_settings(20, steps=10)

T0 = 1_000_000
LEASES = st.sampled_from([1, 500, 1000])
STEPS = st.sampled_from([1, 499, 500, 501, 999, 1000, 1001, -1])
CUSTOMERS = ("acme", "globex")
PARTS = ("ids", "tasks", "due", "processing", "attempts", "dead")


class Model(ContractModel):
    """The contract of lab 05's queue as dictionaries (and the ledger as totals); every rule is one
    call, checked against it."""

    def __init__(self):
        super().__init__()
        self.now = T0
        self.ids = 0
        self.tasks, self.due, self.processing, self.attempts, self.dead = {}, {}, {}, {}, {}
        self.claims = []          # every (id, attempt) ever handed out, live or not
        self.usage, self.ledger = {}, {}
        self.db = None

    # -- helpers --------------------------------------------------------------------------------
    def check_keys(self):
        r = self.redis
        q = lambda part: r.key("queue", part)  # noqa: E731
        expected = {
            "ids": str(self.ids) if self.ids else None,
            "tasks": {str(i): p for i, p in self.tasks.items()},
            "due": {str(i): float(s) for i, s in self.due.items()},
            "processing": {str(i): float(s) for i, s in self.processing.items()},
            "attempts": {str(i): str(n) for i, n in self.attempts.items()},
            "dead": {str(i): why for i, why in self.dead.items()},
        }
        seen = {"ids": r.get(q("ids")), "tasks": r.hgetall(q("tasks")), "attempts": r.hgetall(q("attempts")),
                "dead": r.hgetall(q("dead")),
                "due": dict(r.zrange(q("due"), 0, -1, withscores=True)),
                "processing": dict(r.zrange(q("processing"), 0, -1, withscores=True))}
        for part in PARTS:
            if seen[part] != expected[part]:
                self.fail(_("queue:{part} holds {seen!r}, the contract expects {expected!r}", part=part,
                            seen=seen[part], expected=expected[part]))

    def pick(self, index):
        """A claim handed out before (live or stale), or a task that never existed."""
        if not self.claims or index >= len(self.claims):
            return 99, 1 + index % 3
        return self.claims[index]

    def live(self, task, attempt):
        return task in self.processing and self.attempts.get(task) == attempt

    # -- the queue --------------------------------------------------------------------------------
    @initialize(n=st.sampled_from([1, 2, 3]))
    def tasks_are_waiting(self, n):
        for i in range(n):
            self.schedule(-i, f"job{i}")

    @rule(offset=st.sampled_from([-1, 0, 1, 500]), payload=st.sampled_from(["send-a", "resize", "bill"]))
    def schedule(self, offset, payload):
        self.ids += 1
        self.tasks[self.ids], self.due[self.ids] = payload, self.now + offset
        self.expect(self.call("schedule", payload, self.now + offset), ("ok", self.ids), "schedule-ids")

    @rule(lease=LEASES, limit=st.sampled_from([1, 2, 10]),
          outcomes=st.lists(st.sampled_from(["ack", "fail", "dies"]), min_size=3, max_size=3),
          retry=st.sampled_from([0, 1, 1000]), most=st.sampled_from([1, 2, 3]))
    def worker(self, lease, limit, outcomes, retry, most):
        """A worker claims, then acks, fails or dies holding each task it got."""
        for (task, _payload, attempt), outcome in zip(self.claim(lease, limit), outcomes):
            if outcome == "ack":
                self.ack_call(task, attempt)
            elif outcome == "fail":
                self.fail_call(task, attempt, "timeout", retry, most)

    def claim(self, lease, limit):
        ready = sorted((s, str(i)) for i, s in self.due.items() if s <= self.now)[:limit]
        out = []
        for _score, name in ready:
            task = int(name)
            del self.due[task]
            self.processing[task] = self.now + lease
            self.attempts[task] = self.attempts.get(task, 0) + 1
            self.claims.append((task, self.attempts[task]))
            out.append([task, self.tasks[task], self.attempts[task]])
        self.expect(self.call("claim", self.now, lease, limit), ("ok", out), "claim-due-earliest-first")
        return out

    @rule(index=st.integers(0, 12), which=st.sampled_from(["ack", "fail"]), most=st.sampled_from([1, 2, 3]))
    def late_report(self, index, which, most):
        """An ack or a fail from a claim made before (its lease may have run out), or of no task."""
        task, attempt = self.pick(index)
        if which == "ack":
            self.ack_call(task, attempt)
        else:
            self.fail_call(task, attempt, "card declined", 1, most)

    def ack_call(self, task, attempt):
        if task not in self.tasks:
            expected, item = "unknown", "finish-unknown"
        elif not self.live(task, attempt):
            expected, item = "stale", "finish-stale"
        else:
            expected, item = "acked", "ack-live"
            for part in (self.tasks, self.processing, self.attempts):
                del part[task]
        self.expect(self.call("ack", task, attempt), ("ok", expected), item)

    def fail_call(self, task, attempt, reason, retry, most):
        if task not in self.tasks:
            expected, item = "unknown", "finish-unknown"
        elif not self.live(task, attempt):
            expected, item = "stale", "finish-stale"
        else:
            del self.processing[task]
            if attempt < most:
                expected, item = "retry", "fail-retry"
                self.due[task] = self.now + retry
            else:
                expected, item = "dead", "fail-dead"
                self.dead[task] = reason
        self.expect(self.call("fail", task, attempt, reason, self.now + retry, most), ("ok", expected), item)

    @rule(lease=LEASES, late=st.sampled_from([-1, 0, 1]), most=st.sampled_from([1, 2, 3]))
    def worker_dies_then_recover(self, lease, late, most):
        """A worker claims and dies holding its tasks; recover runs a ms before, at or after the lease's end."""
        self.claim(lease, 10)
        self.time_passes_then_recover(lease + late, most)

    @rule(step=STEPS, most=st.sampled_from([1, 2, 3]))
    def time_passes_then_recover(self, step, most):
        self.now += step
        self.steps.append(_("the clock moves {step} ms", step=step))
        back = dead = 0
        for task in sorted(t for t, end in self.processing.items() if end <= self.now):
            del self.processing[task]
            if self.attempts.get(task, 0) < most:
                self.due[task] = self.now
                back += 1
            else:
                self.dead[task] = "lease expired"
                dead += 1
        self.expect(self.call("recover", self.now, most), ("ok", {"requeued": back, "dead": dead}),
                    "recover-leases")

    # -- the ledger -------------------------------------------------------------------------------
    @rule(customer=st.sampled_from(CUSTOMERS), units=st.sampled_from([1, 7]), then_flush=st.booleans())
    def usage_counted(self, customer, units, then_flush):
        self.steps.append(f"HINCRBY usage {customer} {units}")
        self.redis.hincrby(self.redis.key("usage"), customer, units)
        self.usage[customer] = self.usage.get(customer, 0) + units
        if then_flush:
            self.flush()

    def flush(self):
        if self.db is None:
            self.db = self.fixtures["box"].ledger_create()
        expected = dict(self.usage)
        for customer, units in self.usage.items():
            self.ledger[customer] = self.ledger.get(customer, 0) + units
        self.usage = {}
        self.expect(self.call("flush", self.db), ("ok", expected), "flush-moves")
        box = self.fixtures["box"]
        for customer in CUSTOMERS:
            seen, want = box.ledger_total(self.db, customer), self.ledger.get(customer, 0)
            if seen != want:
                self.fail(_("the ledger holds {seen} units of {customer}, the contract expects {expected}",
                            seen=seen, customer=customer, expected=want))


@points(4)
@hint("model")
@contract("schedule-ids", "claim-due-earliest-first", "claim-limit", "claim-reply", "claim-moves", "time-given",
          "live-lease", "ack-live", "finish-stale", "finish-unknown", "fail-retry", "fail-dead", "recover-leases",
          "recover-at-now", "dead-keeps-task", "dead-never-claimed", "queue-keys", "flush-moves")
def test_random_call_sequences_follow_the_contract_hidden(lab, redis, box):
    """Random sequences of queue calls, clock steps and flushes give the replies and keys the contract promises."""
    Machine = type("Lab05Model", (Model,), {"fixtures": {"lab": lab, "redis": redis, "box": box}})
    run_state_machine_as_test(Machine, settings=SETTINGS)
