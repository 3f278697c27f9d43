"""Public tests of lab 07, the guard: run them with `python3 run.py check 07`.

Some tests pause the lab's private Redis (SIGSTOP, then SIGCONT) while your code waits for it; they
are skipped when the check runs against a server of your own (REDIS_URL).
"""
import contextlib
import time

import pytest

from redis_course.l10n import _
from redis_course.labs.engine import pytest_plugin
from redis_course.labs.engine.testing import contract, hint, points, student_raises

BUDGET_MS = 250
HEALTHY_MS = 3_000  # the budget where the server is healthy: a busy grader is no outage
SLACK_S = 3.0  # what the grader adds to the budget: its own round trip to your process, on a busy machine


@contextlib.contextmanager
def paused_server():
    """The lab's private Redis stops answering (its processes stopped) for the block, then goes on."""
    run = pytest_plugin._run
    server = run.server if run is not None else None
    if server is None or server.proc is None:
        pytest.skip("this test pauses the lab's private Redis; there is none with REDIS_URL")
    server.pause()
    try:
        yield
    finally:
        server.resume()


def timed(fn, *args):
    start = time.monotonic()
    answer = fn(*args)
    return answer, time.monotonic() - start


@points(2)
@hint("guard-redis")
@contract("guarded-redis-answer")
def test_while_redis_answers_the_limiter_decides(lab, redis):
    """While Redis answers, the limiter decides, whatever the policy."""
    first = lab.admit("api", "a", 1, 60_000, HEALTHY_MS, "open")
    assert first == {"admitted": True, "by": "redis"}, _("admit returned {answer}", answer=first)
    second = lab.admit("api", "b", 1, 60_000, HEALTHY_MS, "open")
    assert second == {"admitted": False, "by": "redis"}, _(
        "a full limiter answered {answer}: fail-open is for when Redis gives no answer, not for a refusal",
        answer=second)
    assert redis.zcard(redis.key("sem", "api")) == 1


@pytest.mark.parametrize("policy", ["open", "closed"])
@points(2)
@hint("budget")
@contract("guarded-policy-answer", "guarded-budget")
def test_a_paused_server_costs_the_budget_and_the_policy_answers(lab, redis, policy):
    """With the server paused, admit answers by its policy within the time budget."""
    lab.admit("api", "warm-up", 5, 60_000, BUDGET_MS, policy)   # your process is started and connected
    with paused_server():
        answer, took = timed(lab.admit, "api", "a", 5, 60_000, BUDGET_MS, policy)
    want = {"admitted": policy == "open", "by": policy}
    assert answer == want, _("policy {policy!r}, server paused: admit returned {answer}", policy=policy,
                             answer=answer)
    assert took < BUDGET_MS / 1000 + SLACK_S, _(
        "budget {budget} ms, server paused: admit took {took:.2f} s", budget=BUDGET_MS, took=took)


@points(2)
@hint("bugs")
@contract("guarded-bugs-raised", "guarded-arguments")
def test_a_bug_is_raised_not_admitted(lab, redis):
    """Fail-open answers only for an unreachable Redis: a bug is raised, not admitted."""
    with student_raises("ValueError"):
        lab.admit("api", "a", 0, 60_000, HEALTHY_MS, "open")          # limit 0 is a bug of the caller
    with student_raises("ValueError"):
        lab.admit("api", "a", 5, 60_000, HEALTHY_MS, "sometimes")     # so is a policy that does not exist
    redis.set(redis.key("sem", "api"), "not a sorted set")
    with student_raises("ResponseError"):
        lab.admit("api", "a", 5, 60_000, HEALTHY_MS, "open")          # WRONGTYPE: Redis answered, with an error


@points(2)
@hint("breaker")
@contract("breaker-cooldown")
def test_the_breaker_answers_without_asking_until_the_cooldown_ends(lab, redis):
    """With a cooldown, after no answer the policy answers until it ends; then Redis decides again."""
    cooldown_ms = 4_000
    lab.admit("api", "warm-up", 5, 60_000, BUDGET_MS, "closed")
    with paused_server():
        first = lab.admit("api", "a", 5, 60_000, BUDGET_MS, "closed", cooldown_ms)
    failed_at = time.monotonic()
    assert first == {"admitted": False, "by": "closed"}, _("server paused: admit returned {answer}", answer=first)
    during = lab.admit("api", "b", 5, 60_000, HEALTHY_MS, "closed", cooldown_ms)
    assert during == {"admitted": False, "by": "closed"}, _(
        "within the cooldown after no answer, admit must answer by the policy without asking Redis; "
        "it returned {answer}", answer=during)
    time.sleep(max(0.0, failed_at + cooldown_ms / 1000 + 0.5 - time.monotonic()))
    after = lab.admit("api", "c", 5, 60_000, HEALTHY_MS, "closed", cooldown_ms)
    assert after == {"admitted": True, "by": "redis"}, _(
        "after the cooldown Redis answers again, yet admit returned {answer}", answer=after)
