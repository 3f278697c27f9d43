"""Lesson 01: money in cents is taken in one step (Lua), not "DECRBY, then give back".

The common pattern is driven step by step (a generator per client) to stop it between its two
commands, as a crash would, and to interleave two clients exactly; both backends.
"""

from __future__ import annotations

import pytest

from redis_course.lessons import money
from redis_course.lessons import ratelimit as rl


def test_a_crash_between_decrby_and_its_give_back_takes_the_money(r):
    account = r.key("account")
    r.set(account, 10000)
    steps = money.withdraw_decr_first(r, account, 15000)
    assert next(steps).endswith("-> -5000")
    steps.close()  # dies before INCRBY
    assert r.get(account) == "-5000"  # refused, and yet 150.00 are gone


def test_decr_first_refuses_a_covered_withdrawal_under_contention(r):
    account = r.key("account")
    r.set(account, 10000)
    decisions = rl.interleave(
        {"A": money.withdraw_decr_first(r, account, 12000), "B": money.withdraw_decr_first(r, account, 5000)},
        "ABABAB",
        out=lambda s: None,
    )
    assert decisions == {"A": False, "B": False}  # B's 50.00 were covered by the 100.00
    assert r.get(account) == "10000"


def test_the_script_checks_and_takes_in_one_step(r):
    account = r.key("account")
    r.set(account, 10000)
    assert money.withdraw(r, account, 12000) == -1  # refused: nothing written
    assert r.get(account) == "10000"
    assert money.withdraw(r, account, 5000) == 5000
    assert money.withdraw(r, account, 5000) == 0
    assert money.withdraw(r, account, 1) == -1
    assert r.get(account) == "0"


def test_a_retried_withdrawal_with_a_request_id_takes_the_money_once(r):
    account = r.key("account")
    r.set(account, 10000)
    assert [money.withdraw(r, account, 3000) for _ in range(2)] == [7000, 4000]  # a plain retry: twice
    r.set(account, 10000)
    assert [money.withdraw_once(r, account, 3000, "req-1") for _ in range(3)] == [7000] * 3
    assert money.withdraw_once(r, account, 3000, "req-2") == 4000
    assert r.get(account) == "4000"
    r.set(account, 100)
    assert [money.withdraw_once(r, account, 3000, "req-3") for _ in range(2)] == [-1, -1]
    assert 0 < r.ttl(r.key("account:req:req-1")) <= 86400


@pytest.mark.parametrize("amount", [0, -5, 1.5, True, "10"])
def test_amounts_that_are_not_positive_cents_are_refused_before_redis(r, amount):
    with pytest.raises(ValueError, match="positive whole number of cents"):
        money.withdraw(r, r.key("account"), amount)
    assert r.exists(r.key("account")) == 0
