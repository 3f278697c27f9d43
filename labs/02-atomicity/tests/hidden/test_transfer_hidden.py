"""Hidden tests of lab 02, transfers: only the grader runs these."""
import re

from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points, student_raises

GRADER_CANARY = "grader-canary-02-atomicity-4c8e1a7f"  # the release test proves this never leaves the repo


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


def balance(redis, name):
    value = redis.get(redis.key("account", name))
    return int(value) if value is not None else 0


@points(1)
@hint("amount")
@contract("transfer-amount", "transfer-writes-nothing-when-refused")
def test_amount_must_be_positive_whole_cents_hidden(lab, redis):
    """transfer refuses zero, negative and fractional amounts with ValueError."""
    redis.set(redis.key("account", "alice"), 100)
    for bad in (0, -5, 2.5):
        with student_raises("ValueError"):
            lab.transfer("alice", "bob", bad)
    for name, expected in (("alice", 100), ("bob", 0)):
        seen = balance(redis, name)
        assert seen == expected, holds(f"account:{name}", expected, seen)


@points(1)
@hint("same-account")
@contract("transfer-same-account")
def test_transfer_to_the_same_account_is_refused_hidden(lab, redis):
    """transfer to the same account is refused with ValueError."""
    redis.set(redis.key("account", "alice"), 100)
    with student_raises("ValueError"):
        lab.transfer("alice", "alice", 10)
    seen = balance(redis, "alice")
    assert seen == 100, holds("account:alice", 100, seen)


@points(1)
@hint("whole-cents")
@contract("transfer-whole-cents")
def test_balances_stay_whole_cents_hidden(lab, redis):
    """Balances stay plain integers of cents that INCRBY accepts."""
    redis.set(redis.key("account", "alice"), 1000)
    for _round in range(3):
        seen = lab.transfer("alice", "bob", 1)
        assert seen is True, returns('transfer("alice", "bob", 1)', True, seen)
    for name, value in (("alice", "997"), ("bob", "3")):
        stored = redis.get(redis.key("account", name))
        assert re.fullmatch(r"\d+", stored or ""), holds(f"account:{name}", _("whole cents"), repr(stored))
        assert stored == value, holds(f"account:{name}", value, stored)
        assert redis.incrby(redis.key("account", name), 0) == int(value)   # other code can INCRBY it


@points(1)
@hint("missing-account")
@contract("transfer-missing-account")
def test_missing_account_has_nothing_to_give_hidden(lab, redis):
    """A missing account has a balance of 0 and gives nothing."""
    seen = lab.transfer("ghost", "bob", 1)
    assert seen is False, returns('transfer("ghost", "bob", 1)', False, seen)
    for name in ("ghost", "bob"):
        seen = balance(redis, name)
        assert seen == 0, holds(f"account:{name}", _("nothing or 0"), seen)


@points(3)
@hint("negative")
@contract("transfer-concurrent-no-overdraw")
def test_concurrent_withdrawals_never_overdraw_hidden(lab, redis):
    """Four processes taking the last 100 cents at once: one succeeds, the balance ends at 0."""
    redis.set(redis.key("account", "warmup"), 15)   # alone first: fails fast if wrong anyway
    seen = [lab.transfer("warmup", "sink0", 10), lab.transfer("warmup", "sink0", 10)]
    assert seen == [True, False], returns('transfer("warmup", "sink0", 10)', "True, False", seen)
    seen = redis.get(redis.key("account", "warmup"))
    assert seen == "5", holds("account:warmup", 5, seen)
    redis.delete(redis.key("account", "sink0"))
    # 13 accounts with 100 each; 16 processes take 10 at a time from all of them until they are empty
    sources = [f"drain{i}" for i in range(13)]
    for name in sources:
        redis.set(redis.key("account", name), 100)
    calls = [("transfer", (sources[j % 13], f"sink{j % 16}", 10)) for j in range(13 * 30)]
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    final = {name: balance(redis, name) for name in sources}
    assert min(final.values()) >= 0, _("expected no balance below zero, saw {seen}").format(seen=final)
    assert sum(results) == 130, _("expected 130 transfers of 10 to succeed from 13 x 100, saw {seen}").format(
        seen=sum(results))
    sinks = sum(balance(redis, f"sink{i}") for i in range(16))
    assert sinks + sum(final.values()) == 1300, _(
        "expected 1300 cents in all, saw {seen}: money was created or lost").format(seen=sinks + sum(final.values()))
    assert set(final.values()) == {0}, _("expected every source to end at 0, saw {seen}").format(seen=final)


@points(2)
@hint("watch-retry")
@contract("transfer-not-refused-under-contention", "transfer-concurrent-books")
def test_covered_transfers_are_not_refused_under_contention_hidden(lab, redis):
    """Sixteen processes moving 1 cent each from a rich account at once: every transfer succeeds."""
    # A WATCH that is not retried answers False whenever another process wrote the account between
    # WATCH and EXEC.  Sixteen processes writing the same key make that happen in nearly every
    # round; the test runs 3 rounds of 160 transfers and fails on the first refusal.
    rounds, per_round = 3, 160
    for round_ in range(rounds):
        rich = f"rich{round_}"
        redis.set(redis.key("account", rich), 10_000)
        calls = [("transfer", (rich, f"payee{j % 16}", 1)) for j in range(per_round)]
        results = lab.run_concurrently(calls, processes=16)
        errors = [res for res in results if isinstance(res, Exception)]
        assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
        refused = [res for res in results if res is not True]
        assert not refused, _(
            "expected every transfer of 1 cent from 10000 to return True, saw {n} of {total} refused in round "
            "{round} of {rounds}: another process writing first is not a lack of money").format(
            n=len(refused), total=per_round, round=round_ + 1, rounds=rounds)
        seen = balance(redis, rich)
        assert seen == 10_000 - per_round, holds(f"account:{rich}", 10_000 - per_round, seen)


# Another client's transfer, whole and atomic: what the grader does in the middle of the student's call.
MOVE = """
local available = tonumber(redis.call('GET', KEYS[1]) or '0')
if available < tonumber(ARGV[1]) then return 0 end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
return 1
"""


@points(1)
@hint("read-before-watch")
@contract("transfer-concurrent-no-overdraw", "transfer-concurrent-books")
def test_a_withdrawal_right_after_the_read_is_not_missed_hidden(lab, redis):
    """Another client takes the whole balance right after transfer reads it: one of the two gets it."""
    # The grader holds the transfer's first command after the one that names account:alice (its GET,
    # or its WATCH) at the proxy, moves alice's 100 to carol meanwhile, then lets the command go.  A
    # GET before WATCH, or a GET checked in Python before DECRBY, then moves money alice no longer has.
    alice, bob, carol = (redis.key("account", n) for n in ("alice", "bob", "carol"))
    redis.set(alice, 100)
    moved = []

    def other_transfer():
        moved.append(redis.eval(MOVE, 2, alice, carol, 100))

    seen, between = lab.call_between("transfer", ("alice", "bob", 100), after_key=alice, between=other_transfer)
    if not between:  # one script: nothing came after the read, the other transfer comes after the call
        other_transfer()
    assert not isinstance(seen, Exception), _("expected no error, saw {seen}").format(seen=seen)
    final = {name: balance(redis, name) for name in ("alice", "bob", "carol")}
    assert min(final.values()) >= 0, _("expected no balance below zero, saw {seen}").format(seen=final)
    assert sum(final.values()) == 100, _(
        "expected 100 cents in all, saw {seen}: money was created or lost").format(seen=sum(final.values()))
    other = bool(moved and moved[0] == 1)
    assert (seen is True) != other, _(
        "alice held 100 cents; transfer(\"alice\", \"bob\", 100) returned {seen} and, between its read and "
        "its next command, another client's transfer of the same 100 {other}: exactly one of them can "
        "succeed").format(seen=seen, other=_("succeeded") if other else _("was refused"))
    assert final == {"alice": 0, "bob": 100 if seen is True else 0, "carol": 100 if other else 0}, \
        _("expected {want}, saw {seen}").format(want={"alice": 0, "bob": 100 if seen is True else 0,
                                                      "carol": 100 if other else 0}, seen=final)


@points(1)
@hint("watch-retry")
@contract("transfer-not-refused-under-contention")
def test_a_deposit_right_after_the_read_does_not_refuse_the_transfer_hidden(lab, redis):
    """Another client adds 1 cent right after transfer reads (or WATCHes) the balance: it still moves."""
    # The same hold; meanwhile the grader adds 1 cent to alice.  A transaction under WATCH is then
    # refused with WatchError: retried, it moves the money; reported as False, it refuses a transfer
    # that the balance covers.
    alice = redis.key("account", "alice")
    redis.set(alice, 100)
    seen, between = lab.call_between("transfer", ("alice", "bob", 100), after_key=alice,
                                     between=lambda: redis.incrby(alice, 1))
    if not between:  # one script: nothing came after the read, the deposit comes after the call
        redis.incrby(alice, 1)
    assert not isinstance(seen, Exception), _("expected no error, saw {seen}").format(seen=seen)
    assert seen is True, _(
        "alice held 100 cents, then 101 after another client's deposit in the middle of the call; "
        "transfer(\"alice\", \"bob\", 100) returned {seen}: another process writing first is not a lack "
        "of money").format(seen=seen)
    final = {name: balance(redis, name) for name in ("alice", "bob")}
    assert final == {"alice": 1, "bob": 100}, _("expected {want}, saw {seen}").format(
        want={"alice": 1, "bob": 100}, seen=final)
