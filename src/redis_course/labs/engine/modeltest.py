"""What a lab's model-based test shares (Hypothesis' stateful testing against a model of the contract).

:class:`ContractModel` is the base of each lab's ``Model``: it holds the test's ``lab`` and ``redis``,
records every call it sends, and fails with the shortest sequence and what the contract expected.
:func:`same` compares replies in value and type; :func:`model_settings` fixes the seed and bounds the
time a test (and its shrinking) may take.  Runs in the grader: nothing here reaches student code.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import engine as _engine
from hypothesis.stateful import RuleBasedStateMachine

from ...l10n import _
from ..sandbox.errors import StudentError

# Shrinking stops after this many seconds (Hypothesis' default, 5 minutes, is past a lab's budget):
# a failure found is reported, shrunk as far as these seconds allowed.
_engine.MAX_SHRINKING_SECONDS = 10


def model_settings(max_examples: int, steps: int = 12) -> settings:
    """The same examples on every run (``derandomize``: the same submission gets the same score), no
    deadline (a call's time is the sandbox's business), no example database, no health checks."""
    return settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )


def same(a, b) -> bool:
    """Equal in value and in type, all the way down (True is not 1, 10.0 is not 10, "5" is not 5)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def shown(outcome) -> str:
    kind, value = outcome
    return _("{type} raised", type=value) if kind == "raise" else f"{value!r} ({type(value).__name__})"


class ContractModel(RuleBasedStateMachine):
    """A lab's contract as a model; every rule is one call of the student's code, checked against it.
    ``fixtures`` holds the test's ``lab`` and ``redis`` (not class attributes: Hypothesis looks for
    rules there); a subclass defines ``check_keys()`` (what Redis must hold now)."""

    fixtures: dict = {}

    def __init__(self) -> None:
        super().__init__()
        self.lab, self.redis = self.fixtures["lab"], self.fixtures["redis"]
        self.clean()
        self.steps: list[str] = []

    def clean(self) -> None:
        """Every example starts from no key of the run (a lab on a cluster deletes them one by one)."""
        self.redis.cleanup()

    def call(self, name: str, *args):
        """Call the student's function; ("ok", reply) or ("raise", exception type name)."""
        self.steps.append(f"{name}({', '.join(map(repr, args))})")
        try:
            return "ok", getattr(self.lab, name)(*args)
        except StudentError as exc:
            if exc.type == "NotImplementedError":
                raise
            return "raise", exc.type

    def fail(self, message: str) -> None:
        raise AssertionError(_("after {steps}: {problem}", steps="; ".join(self.steps), problem=message))

    def expect(self, seen, expected, item: str) -> None:
        if seen[0] != expected[0] or not same(seen[1], expected[1]):
            self.fail(
                _(
                    "{call} gave {seen}, the contract ({item}) expects {expected}",
                    call=self.steps[-1],
                    seen=shown(seen),
                    item=item,
                    expected=shown(expected),
                )
            )
        self.check_keys()

    def check_keys(self) -> None:
        raise NotImplementedError
