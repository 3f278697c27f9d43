"""Hidden tests of lab 01: only the grader runs these."""
import threading

from redis_course.l10n import _
from redis_course.labs.engine.testing import (InjectedCrash, StudentCrash, StudentError, StudentTimeout, contract, hint,
                                       points, student_raises)

GRADER_CANARY = "grader-canary-01-incr-8c2e5a71"  # must never appear in a student release

MAX = 2**63 - 1


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


@points(1)
@hint("separate-keys")
@contract("count-view-key", "view-count-reads", "next-id-per-kind")
def test_posts_are_counted_separately_hidden(lab, redis):
    """Each post has its own view counter."""
    for call, post, expected in [("count_view", 90210, 1), ("count_view", 90210, 2), ("count_view", 90211, 1),
                                 ("view_count", 90210, 2)]:
        seen = getattr(lab, call)(post)
        assert seen == expected, returns(f"{call}({post})", expected, seen)
    seen = redis.get(redis.key("views", "post", 90211))
    assert seen == "1", holds("views:post:90211", "1", seen)
    # the counter taken away between view_count's own requests: a count, never an error
    key = redis.key("views", "post", 90212)
    redis.set(key, 5)
    seen, between = lab.call_between("view_count", (90212,), after_key=key, between=lambda: redis.getdel(key))
    assert seen in ((0, 5) if between else (5,)), returns("view_count(90212)", 5 if not between else "0 / 5", seen)
    # kinds are names as given: "Order" is not "order"
    for kind, expected in [("order", 1), ("Order", 1), ("order", 2)]:
        seen = lab.next_id(kind)
        assert seen == expected, returns(f"next_id({kind!r})", expected, seen)
    seen = redis.get(redis.key("ids", "Order"))
    assert seen == "1", holds("ids:Order", "1", seen)


@points(2)
@hint("ids-unique")
@contract("next-id-unique-concurrent")
def test_ids_are_unique_across_processes_hidden(lab, redis):
    """Eighty ids asked for by four processes at once are all different."""
    results = lab.run_concurrently([("next_id", ("invoice",))] * 80, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    assert sorted(results) == list(range(1, 81)), _("expected the ids 1 to 80, each once, saw {seen}").format(
        seen=sorted(results)[:10])


@points(2)
@hint("take-views-race")
@contract("take-views-one-step")
def test_take_views_loses_nothing_under_load_hidden(lab, redis):
    """No view is lost while take_views runs among views from other processes."""
    # first one view counted between take_views's own requests (forced), then 300 from four processes
    key = redis.key("views", "post", 78)
    redis.set(key, 5)
    taken, between = lab.call_between("take_views", (78,), after_key=key, between=lambda: redis.incr(key))
    assert not isinstance(taken, Exception), _("expected no error, saw {seen}").format(seen=taken)
    # one step (GETDEL, a script, a transaction) never waits: 5 taken; a second request waits while
    # another process counts a view, which must then be taken or left, not reset away
    want = 6 if between else 5
    assert taken in (want, want - 1), returns("take_views(78)", want, taken)  # the view may come after the reset
    total = taken + int(redis.get(key) or 0)
    assert total == want, _(
        "expected {want} views taken or left in the counter, saw {seen}: a view counted between take_views's "
        "reading and resetting was lost").format(want=want, seen=total)
    calls = []
    for i in range(300):
        calls.append(("count_view", (77,)))
        if i % 5 == 4:
            calls.append(("take_views", (77,)))
    results = lab.run_concurrently(calls, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    taken = sum(res for (name, _), res in zip(calls, results) if name == "take_views")
    left = int(redis.get(redis.key("views", "post", 77)) or 0)
    assert taken + left == 300, _(
        "expected 300 views taken or left in the counter, saw {seen}: views were lost or counted twice between "
        "reading and resetting").format(seen=taken + left)


@points(1)
@hint("safe-incr-overflow")
@contract("safe-incr-overflow")
def test_safe_incr_reports_overflow_hidden(lab, redis):
    """safe_incr reports an overflow at either end of 64 bits and keeps the value."""
    redis.set(redis.key("big"), MAX - 1)
    for args, expected in [(("big",), {"ok": True, "value": MAX}),
                           (("big",), {"ok": False, "error": "overflow", "found": str(MAX)})]:
        seen = lab.safe_incr(*args)
        assert seen == expected, returns("safe_incr", expected, seen)
    redis.set(redis.key("small"), -MAX - 1)
    expected = {"ok": False, "error": "overflow", "found": str(-MAX - 1)}
    seen = lab.safe_incr("small", -1)
    assert seen == expected, returns("safe_incr", expected, seen)
    seen = redis.get(redis.key("big"))
    assert seen == str(MAX), holds("big", MAX, seen)


@points(1)
@hint("safe-incr-wrong-type")
@contract("safe-incr-wrong-type", "safe-incr-leaves-refused-key")
def test_safe_incr_reports_wrong_type_hidden(lab, redis):
    """safe_incr reports a key of another type by its TYPE and leaves it alone."""
    redis.rpush(redis.key("jobs"), "a", "b")
    try:
        report = lab.safe_incr("jobs")
    except StudentError as e:
        raise AssertionError(_("expected a report, saw safe_incr raise {seen}").format(
            seen=f"{e.type}: {e.message}")) from None
    expected = {"ok": False, "error": "wrong_type", "found": "list"}
    assert report == expected, returns("safe_incr", expected, report)
    seen = redis.lrange(redis.key("jobs"), 0, -1)
    assert seen == ["a", "b"], holds("jobs", ["a", "b"], seen)
    # a key that becomes a list between safe_incr's own requests: what INCRBY met is reported
    key = redis.key("turns")
    redis.set(key, 5)
    report, between = lab.call_between(
        "safe_incr", ("turns",), after_key=key, between=lambda: (redis.delete(key), redis.rpush(key, "a")))
    expected = {"ok": False, "error": "wrong_type", "found": "list"} if between else {"ok": True, "value": 6}
    assert report == expected, returns("safe_incr('turns')", expected, report)


@points(2)
@hint("safe-incr-not-integer")
@contract("safe-incr-not-integer", "safe-incr-leaves-refused-key")
def test_safe_incr_strict_integers_hidden(lab, redis):
    """safe_incr reports ' 1', '007', '1.5', '' and 2**63 as not integers and keeps them."""
    for text in [" 1", "007", "1.5", "", "9223372036854775808"]:
        redis.set(redis.key("odd"), text)
        try:
            report = lab.safe_incr("odd", 2)
        except StudentError as e:
            raise AssertionError(_("expected a report, saw safe_incr raise {seen}").format(
                seen=f"{e.type}: {e.message}")) from None
        expected = {"ok": False, "error": "not_integer", "found": text}
        assert report == expected, returns("safe_incr", expected, report)
        seen = redis.get(redis.key("odd"))
        assert seen == text, holds("odd", repr(text), repr(seen))
    for amount in (2**63, -2**63 - 1):  # Redis refuses the amount itself; a missing key holds nothing
        report = lab.safe_incr("absent", amount)
        expected = {"ok": False, "error": "not_integer", "found": None}
        assert report == expected, returns(f"safe_incr('absent', {amount})", expected, report)
        assert redis.exists(redis.key("absent")) == 0, holds("absent", None, redis.get(redis.key("absent")))


@points(2)
@hint("cents-overflow")
@contract("deposit-overflow", "deposit-returns-balance")
def test_deposit_refuses_overflow_hidden(lab, redis):
    """deposit refuses to take a balance past 2**63 - 1 with OverflowError."""
    seen = lab.deposit(6, MAX)  # the largest balance Redis can hold is still a balance
    assert seen == MAX, returns(f"deposit(6, {MAX})", MAX, seen)
    redis.set(redis.key("balance", 7), MAX - 100)
    seen = lab.deposit(7, 100)
    assert seen == MAX, returns("deposit(7, 100)", MAX, seen)
    with student_raises("OverflowError"):
        lab.deposit(7, 1)
    seen = redis.get(redis.key("balance", 7))
    assert seen == str(MAX), holds("balance:7", MAX, seen)
    for cents in (MAX + 1, 2**64):  # more than any balance holds: Redis itself says "not an integer" to these
        with student_raises("OverflowError"):
            lab.deposit(8, cents)
    assert redis.exists(redis.key("balance", 8)) == 0, holds("balance:8", None, redis.get(redis.key("balance", 8)))
    # another deposit between deposit's own requests takes the balance to the edge: one INCRBY decides
    key = redis.key("balance", 9)
    redis.set(key, MAX - 10)
    seen, between = lab.call_between("deposit", (9, 5), after_key=key, between=lambda: redis.incrby(key, 8))
    if between:
        assert isinstance(seen, StudentError) and seen.type == "OverflowError", _(
            "expected deposit(9, 5) to raise OverflowError after another deposit took the balance to 2**63 - 3 "
            "between its requests, saw {seen}").format(seen=seen)
        assert redis.get(key) == str(MAX - 2), holds("balance:9", MAX - 2, redis.get(key))
    else:
        assert seen == MAX - 5, returns("deposit(9, 5)", MAX - 5, seen)


@points(1)
@hint("cents-arguments")
@contract("deposit-amount-type", "deposit-positive", "deposit-writes-nothing-when-refused")
def test_deposit_checks_its_arguments_hidden(lab, redis):
    """deposit refuses zero, negative amounts, True, strings and floats and writes nothing."""
    for bad, error in [(0, "ValueError"), (-500, "ValueError"), (True, "TypeError"), ("100", "TypeError"),
                       (10.0, "TypeError")]:
        with student_raises(error):
            lab.deposit(8, bad)
    assert redis.exists(redis.key("balance", 8)) == 0, _("expected a refused deposit to write nothing, saw it write")


@points(1)
@hint("add-up")
@contract("deposit-concurrent")
def test_deposits_from_many_processes_add_up_hidden(lab, redis):
    """Sixty deposits from four processes at once all arrive."""
    results = lab.run_concurrently([("deposit", (9, 25))] * 60, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    seen = redis.get(redis.key("balance", 9))
    assert seen == "1500", holds("balance:9", 1500, seen)


def at_once(proxies, name, *args):
    """Call ``name(*args)`` in every proxy's process at the same moment; results (or errors) in order."""
    barrier = threading.Barrier(len(proxies))
    results = [None] * len(proxies)

    def work(k):
        barrier.wait(timeout=30)
        try:
            results[k] = getattr(proxies[k], name)(*args)
        except (StudentError, StudentTimeout, StudentCrash) as exc:
            results[k] = exc

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(len(proxies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@points(1)
@hint("add-up")
@contract("count-view-concurrent")
def test_a_view_counted_between_two_requests_is_not_lost_hidden(lab, redis):
    """A view another process counts between count_view's own requests is kept."""
    key = redis.key("views", "post", 4242)
    redis.set(key, 5)
    seen, between = lab.call_between("count_view", (4242,), after_key=key, between=lambda: redis.incr(key))
    assert not isinstance(seen, Exception), _("expected no error, saw {seen}").format(seen=seen)
    # one INCR never waits (6); a request after the one that named the key waits while another
    # process counts a view (7 in all), and this call's count is then the newest
    want = 7 if between else 6
    counted = redis.get(key)
    assert counted == str(want), _("expected {want} views counted, saw {seen}: the view another process counted "
                                   "between count_view's requests was lost").format(want=want, seen=counted)
    assert seen == want, returns("count_view(4242)", want, seen)


@points(1)
@hint("overdraft-race")
@contract("withdraw-never-overdraws", "withdraw-insufficient")
def test_a_withdrawal_between_the_check_and_the_decrement_never_overdraws_hidden(lab, redis):
    """Money another process takes between withdraw's own requests is seen: the balance never goes below 0."""
    key = redis.key("balance", 4343)
    redis.set(key, 100)
    seen, between = lab.call_between("withdraw", (4343, 100), after_key=key,
                                     between=lambda: redis.decrby(key, 60))
    balance = redis.get(key)
    if between:   # 40 left when the call went on: it must be refused, and take nothing
        assert isinstance(seen, StudentError) and seen.type == "ValueError", _(
            "expected withdraw(4343, 100) to raise ValueError after another process took 60 of the 100 cents "
            "between its requests, saw {seen}").format(seen=seen)
        assert balance == "40", holds("balance:4343", 40, balance)
    else:         # one script: it ran before anyone else
        assert seen == 0, returns("withdraw(4343, 100)", 0, seen)
        assert balance == "0", holds("balance:4343", 0, balance)


@points(2)
@hint("overdraft-race")
@contract("withdraw-never-overdraws")
def test_concurrent_withdrawals_never_overdraw_hidden(lab, redis):
    # Several rounds: in each, four processes try to take the same last 100 cents at the same moment.
    """Four processes taking the last 100 cents at once: one succeeds, the balance ends at 0."""
    proxies = lab.parallel(4)
    try:
        for round_ in range(12):
            account = 100 + round_
            redis.set(redis.key("balance", account), 100)
            results = at_once(proxies, "withdraw", account, 100)
            ok = [res for res in results if not isinstance(res, Exception)]
            refused = [res for res in results if isinstance(res, StudentError) and res.type == "ValueError"]
            others = [res for res in results if isinstance(res, Exception) and not any(res is x for x in refused)]
            assert not others, _("expected no error, saw {seen}").format(seen=others[:1])
            balance = redis.get(redis.key("balance", account))
            assert balance == "0", holds(f"balance:{account}", 0, balance)
            assert ok == [0] and len(refused) == 3, _(
                "expected one of four withdrawals of the last 100 cents to succeed, saw {seen}").format(seen=len(ok))
    finally:
        for p in proxies:
            p.close()


def _calls_in_turn(proxy, name, args, stop):
    """Call ``name(*args)`` on ``proxy`` until ``stop`` is set; the results (or errors) in order."""
    results = []
    while not stop.is_set():
        try:
            results.append(getattr(proxy, name)(*args))
        except (StudentError, StudentTimeout, StudentCrash) as exc:
            results.append(exc)
            break
    return results


@points(2)
@hint("take-views-race")
@contract("take-views-one-step")
def test_take_views_is_one_step_even_when_its_commands_are_sent_apart_hidden(lab, redis):
    """No view is lost when Redis runs other clients' commands between take_views' own commands."""
    proxies = lab.parallel(4)
    counters, taker = proxies[:3], proxies[3]
    taken, errors = [], []
    try:
        # Redis promises nothing about running a pipeline without MULTI as one unit: armed, the
        # taker's process sends each of its commands in its own round trip, as Redis may run them.
        taker.faults.arm_crash(10**9)
        stop = threading.Event()

        def take():
            for res in _calls_in_turn(taker, "take_views", (78,), stop):
                (errors if isinstance(res, Exception) else taken).append(res)

        def count(proxy):
            for _i in range(150):
                try:
                    proxy.count_view(78)
                except (StudentError, StudentTimeout, StudentCrash) as exc:
                    errors.append(exc)
                    return

        thread = threading.Thread(target=take, daemon=True)
        thread.start()
        workers = [threading.Thread(target=count, args=(p,), daemon=True) for p in counters]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        stop.set()
        thread.join()
    finally:
        for p in proxies:
            p.close()
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    left = int(redis.get(redis.key("views", "post", 78)) or 0)
    assert sum(taken) + left == 450, _(
        "expected 450 views taken or left in the counter, saw {seen}: views were lost or counted twice between "
        "reading and resetting").format(seen=sum(taken) + left)


@points(1)
@hint("safe-incr-amount")
@contract("safe-incr-amount-type")
def test_safe_incr_refuses_an_amount_that_is_not_an_int_hidden(lab, redis):
    """safe_incr refuses True, 1.5 and "2" as an amount with TypeError and writes nothing."""
    redis.set(redis.key("clicks"), 5)
    for bad in (True, False, 1.5, "2"):
        with student_raises("TypeError"):
            lab.safe_incr("clicks", bad)
    seen = redis.get(redis.key("clicks"))
    assert seen == "5", _("expected the counter to stay 5, saw {seen}").format(seen=seen)


@points(1)
@hint("cents-arguments")
@contract("withdraw-amount-type", "withdraw-positive")
def test_withdraw_checks_its_arguments_hidden(lab, redis):
    """withdraw refuses True, a float, a string, zero and negative amounts and changes nothing."""
    redis.set(redis.key("balance", 11), 500)
    for bad, error in [(True, "TypeError"), (False, "TypeError"), (1.0, "TypeError"), ("100", "TypeError"),
                       (0, "ValueError"), (-5, "ValueError")]:
        with student_raises(error):
            lab.withdraw(11, bad)
    seen = redis.get(redis.key("balance", 11))
    assert seen == "500", _("expected the balance to stay 500, saw {seen}").format(seen=seen)


@points(2)
@hint("safe-incr-race")
@contract("safe-incr-no-prediction")
def test_safe_incr_near_the_limit_under_contention_hidden(lab, redis):
    """Six processes add 1 to a counter 3 below the limit: three succeed, three report an overflow."""
    proxies = lab.parallel(6)
    try:
        for round_ in range(10):
            name = f"near-max-{round_}"
            redis.set(redis.key(name), MAX - 3)
            results = at_once(proxies, "safe_incr", name, 1)
            errors = [res for res in results if isinstance(res, Exception)]
            assert not errors, _("expected no error, saw {seen}").format(seen=errors[0])
            ok = sorted(res["value"] for res in results if res.get("ok") is True)
            refused = [res for res in results if res.get("ok") is not True]
            assert ok == [MAX - 2, MAX - 1, MAX], _(
                "expected the values {expected}, saw {seen}").format(expected=[MAX - 2, MAX - 1, MAX], seen=ok)
            expected = {"ok": False, "error": "overflow", "found": str(MAX)}
            assert refused == [expected] * 3, _("expected three reports {expected}, saw {seen}").format(
                expected=expected, seen=refused)
    finally:
        for p in proxies:
            p.close()


@points(2)
@hint("withdraw-crash")
@contract("withdraw-crash-safe")
def test_a_crash_inside_withdraw_loses_no_money_hidden(lab, redis):
    """A process that dies between two commands of withdraw leaves the balance as before or paid out."""
    crashed = 0
    for budget in range(4):  # the process dies after 0, 1, 2, 3 round trips on this run's keys
        for start, cents in [(100, 300), (100, 40)]:
            account = 200 + 10 * budget + (cents == 40)
            redis.set(redis.key("balance", account), start)
            lab.faults.arm_crash(budget)
            try:
                lab.withdraw(account, cents)
            except InjectedCrash:
                crashed += 1
            except StudentError as exc:
                if exc.type != "ValueError":
                    raise
            finally:
                lab.faults.arm_crash(None)
            seen = int(redis.get(redis.key("balance", account)) or 0)
            allowed = {start, start - cents} if cents <= start else {start}
            assert seen in allowed, _(
                "expected a balance of {expected} after withdrawing {cents} from {start} and a crash after "
                "{n} round trips, saw {seen}").format(expected=" or ".join(map(str, sorted(allowed))),
                                                      cents=cents, start=start, n=budget, seen=seen)
    assert crashed >= 1, _("expected at least one crash, saw {seen}").format(seen=crashed)


@points(2)
@hint("withdraw-refused")
@contract("withdraw-not-refused-under-contention")
def test_valid_withdrawals_are_not_refused_under_contention_hidden(lab, redis):
    """While others ask for more than the balance, every withdrawal the balance covers succeeds."""
    redis.set(redis.key("balance", 300), 1000)
    calls = []
    for _i in range(150):
        calls += [("withdraw", (300, 10**9)), ("withdraw", (300, 1))]
    results = lab.run_concurrently(calls, processes=8)
    small = [res for (_n, (_a, cents)), res in zip(calls, results) if cents == 1]
    big = [res for (_n, (_a, cents)), res in zip(calls, results) if cents != 1]
    refused = [res for res in small if isinstance(res, Exception)]
    assert not refused, _("expected every withdrawal of 1 cent from 1000 to succeed, saw {n} refused: {seen}").format(
        n=len(refused), seen=refused[0])
    wrong = [res for res in big if not (isinstance(res, StudentError) and res.type == "ValueError")]
    assert not wrong, _("expected ValueError for a withdrawal larger than the balance, saw {seen}").format(
        seen=wrong[0])
    seen = redis.get(redis.key("balance", 300))
    assert seen == "850", _("expected a balance of 850, saw {seen}").format(seen=seen)
