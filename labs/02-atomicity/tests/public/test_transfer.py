"""Public tests of lab 02, transfers: run them with `python3 run.py check 02`."""
import random

from redis_course.labs.testing import hint, points


def balance(redis, name):
    value = redis.get(redis.key("account", name))
    return int(value) if value is not None else 0


@points(2)
@hint("move")
def test_transfer_moves_money(lab, redis):
    """transfer moves the amount from one account to the other, down to 0."""
    redis.set(redis.key("account", "alice"), 100)
    redis.set(redis.key("account", "bob"), 5)
    assert lab.transfer("alice", "bob", 30) is True
    assert redis.get(redis.key("account", "alice")) == "70"
    assert redis.get(redis.key("account", "bob")) == "35"
    assert lab.transfer("alice", "carol", 70) is True      # all of it: the balance may reach 0
    assert redis.get(redis.key("account", "alice")) == "0"
    assert redis.get(redis.key("account", "carol")) == "70"


@points(2)
@hint("insufficient")
def test_transfer_refuses_overdraft(lab, redis):
    """transfer refuses more than the source holds and changes nothing."""
    redis.set(redis.key("account", "alice"), 20)
    assert lab.transfer("alice", "bob", 30) is False
    assert balance(redis, "alice") == 20
    assert balance(redis, "bob") == 0


@points(3)
@hint("conserve")
def test_concurrent_transfers_keep_the_books(lab, redis):
    """640 transfers from sixteen processes keep every balance as the successful transfers say."""
    names = [f"p{i}" for i in range(6)]
    for name in names:
        redis.set(redis.key("account", name), 50)
    # one transfer alone first: a function that is wrong without concurrency fails here, fast
    assert lab.transfer("p0", "p1", 1) is True
    assert (redis.get(redis.key("account", "p0")), redis.get(redis.key("account", "p1"))) == ("49", "51")
    rng = random.Random(2)
    calls = []
    for _ in range(640):
        src, dst = rng.sample(names, 2)
        calls.append(("transfer", (src, dst, rng.randint(1, 40))))
    results = lab.run_concurrently(calls, processes=16)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"transfer raised: {errors[0]}"
    assert all(isinstance(res, bool) for res in results), "transfer must return True or False"
    final = {name: balance(redis, name) for name in names}
    assert sum(final.values()) == 300, f"money was created or lost: total {sum(final.values())}, expected 300"
    assert min(final.values()) >= 0, f"a balance went negative: {final}"
    # the books: every account ends at 50 + what the successful transfers moved in - what they moved out
    expected = dict.fromkeys(names, 50)
    expected["p0"], expected["p1"] = 49, 51
    for (_, (src, dst, amount)), done in zip(calls, results):
        if done:
            expected[src] -= amount
            expected[dst] += amount
    assert final == expected, "the balances do not match the transfers that reported success"
