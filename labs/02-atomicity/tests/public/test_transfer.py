"""Public tests of lab 02, transfers: run them with `python3 run.py check 02`."""
import random

from redis_course.l10n import _
from redis_course.labs.engine.testing import contract, hint, points


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


def balance(redis, name):
    value = redis.get(redis.key("account", name))
    return int(value) if value is not None else 0


@points(2)
@hint("move")
@contract("transfer-moves", "transfer-returns-bool", "transfer-missing-account")
def test_transfer_moves_money(lab, redis):
    """transfer moves the amount from one account to the other, down to 0."""
    redis.set(redis.key("account", "alice"), 100)
    redis.set(redis.key("account", "bob"), 5)
    seen = lab.transfer("alice", "bob", 30)
    assert seen is True, returns('transfer("alice", "bob", 30)', True, seen)
    for name, expected in (("alice", "70"), ("bob", "35")):
        seen = redis.get(redis.key("account", name))
        assert seen == expected, holds(f"account:{name}", expected, seen)
    seen = lab.transfer("alice", "carol", 70)      # all of it: the balance may reach 0
    assert seen is True, returns('transfer("alice", "carol", 70)', True, seen)
    for name, expected in (("alice", "0"), ("carol", "70")):
        seen = redis.get(redis.key("account", name))
        assert seen == expected, holds(f"account:{name}", expected, seen)


@points(2)
@hint("insufficient")
@contract("transfer-insufficient", "transfer-writes-nothing-when-refused")
def test_transfer_refuses_overdraft(lab, redis):
    """transfer refuses more than the source holds and changes nothing."""
    redis.set(redis.key("account", "alice"), 20)
    seen = lab.transfer("alice", "bob", 30)
    assert seen is False, returns('transfer("alice", "bob", 30)', False, seen)
    for name, expected in (("alice", 20), ("bob", 0)):
        seen = balance(redis, name)
        assert seen == expected, holds(f"account:{name}", expected, seen)


@points(3)
@hint("conserve")
@contract("transfer-concurrent-books", "transfer-returns-bool")
def test_concurrent_transfers_keep_the_books(lab, redis):
    """640 transfers from sixteen processes keep every balance as the successful transfers say."""
    names = [f"p{i}" for i in range(6)]
    for name in names:
        redis.set(redis.key("account", name), 50)
    # one transfer alone first: a function that is wrong without concurrency fails here, fast
    seen = lab.transfer("p0", "p1", 1)
    assert seen is True, returns('transfer("p0", "p1", 1)', True, seen)
    for name, expected in (("p0", "49"), ("p1", "51")):
        seen = redis.get(redis.key("account", name))
        assert seen == expected, holds(f"account:{name}", expected, seen)
    rng = random.Random(2)
    calls = []
    for _round in range(640):
        src, dst = rng.sample(names, 2)
        calls.append(("transfer", (src, dst, rng.randint(1, 40))))
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    odd = [res for res in results if not isinstance(res, bool)]
    assert not odd, returns("transfer", "True or False", odd[:1])
    final = {name: balance(redis, name) for name in names}
    assert sum(final.values()) == 300, _("expected 300 cents in all, saw {seen}: money was created or lost").format(
        seen=sum(final.values()))
    assert min(final.values()) >= 0, _("expected no balance below zero, saw {seen}").format(seen=final)
    # the books: every account ends at 50 + what the successful transfers moved in - what they moved out
    expected = dict.fromkeys(names, 50)
    expected["p0"], expected["p1"] = 49, 51
    for (_name, (src, dst, amount)), done in zip(calls, results):
        if done:
            expected[src] -= amount
            expected[dst] += amount
    assert final == expected, _(
        "expected the balances {expected} that the successful transfers make, saw {seen}").format(
        expected=expected, seen=final)
