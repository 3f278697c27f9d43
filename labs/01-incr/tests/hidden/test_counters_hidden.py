"""Hidden tests of lab 01: only the grader runs these."""
import threading

from redis_course.labs.testing import StudentCrash, StudentError, StudentTimeout, hint, points, student_raises

GRADER_CANARY = "grader-canary-01-incr-8c2e5a71"  # must never appear in a student release

MAX = 2**63 - 1


@points(1)
@hint("separate-keys")
def test_posts_are_counted_separately_hidden(lab, redis):
    assert lab.count_view(90210) == 1
    assert lab.count_view(90210) == 2
    assert lab.count_view(90211) == 1
    assert lab.view_count(90210) == 2
    assert redis.get(redis.key("views", "post", 90211)) == "1"


@points(2)
@hint("ids-unique")
def test_ids_are_unique_across_processes_hidden(lab, redis):
    results = lab.run_concurrently([("next_id", ("invoice",))] * 80, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"next_id raised: {errors[0]}"
    assert sorted(results) == list(range(1, 81)), "two processes got the same id"


@points(2)
@hint("take-views-race")
def test_take_views_loses_nothing_under_load_hidden(lab, redis):
    calls = []
    for i in range(300):
        calls.append(("count_view", (77,)))
        if i % 5 == 4:
            calls.append(("take_views", (77,)))
    results = lab.run_concurrently(calls, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"a call raised: {errors[0]}"
    taken = sum(res for (name, _), res in zip(calls, results) if name == "take_views")
    left = int(redis.get(redis.key("views", "post", 77)) or 0)
    assert taken + left == 300, f"{300 - taken - left} of 300 views were lost between reading and resetting"


@points(1)
@hint("safe-incr-overflow")
def test_safe_incr_reports_overflow_hidden(lab, redis):
    redis.set(redis.key("big"), MAX - 1)
    assert lab.safe_incr("big") == {"ok": True, "value": MAX}
    assert lab.safe_incr("big") == {"ok": False, "error": "overflow", "found": str(MAX)}
    redis.set(redis.key("small"), -MAX - 1)
    assert lab.safe_incr("small", -1) == {"ok": False, "error": "overflow", "found": str(-MAX - 1)}
    assert redis.get(redis.key("big")) == str(MAX)


@points(1)
@hint("safe-incr-wrong-type")
def test_safe_incr_reports_wrong_type_hidden(lab, redis):
    redis.rpush(redis.key("jobs"), "a", "b")
    try:
        report = lab.safe_incr("jobs")
    except StudentError as e:
        raise AssertionError(f"safe_incr crashed with {e.type}: {e.message}") from None
    assert report == {"ok": False, "error": "wrong_type", "found": "list"}
    assert redis.lrange(redis.key("jobs"), 0, -1) == ["a", "b"]


@points(2)
@hint("safe-incr-not-integer")
def test_safe_incr_strict_integers_hidden(lab, redis):
    for text in [" 1", "007", "1.5", "", "9223372036854775808"]:
        redis.set(redis.key("odd"), text)
        try:
            report = lab.safe_incr("odd", 2)
        except StudentError as e:
            raise AssertionError(f"safe_incr crashed on {text!r} with {e.type}: {e.message}") from None
        assert report == {"ok": False, "error": "not_integer", "found": text}, f"value {text!r}"
        assert redis.get(redis.key("odd")) == text, f"safe_incr changed {text!r}"


@points(2)
@hint("cents-overflow")
def test_deposit_refuses_overflow_hidden(lab, redis):
    redis.set(redis.key("balance", 7), MAX - 100)
    assert lab.deposit(7, 100) == MAX
    with student_raises("OverflowError"):
        lab.deposit(7, 1)
    assert redis.get(redis.key("balance", 7)) == str(MAX), "the balance changed"


@points(1)
@hint("cents-arguments")
def test_deposit_checks_its_arguments_hidden(lab, redis):
    for bad, error in [(0, "ValueError"), (-500, "ValueError"), (True, "TypeError"), ("100", "TypeError"),
                       (10.0, "TypeError")]:
        with student_raises(error):
            lab.deposit(8, bad)
    assert redis.exists(redis.key("balance", 8)) == 0, "a refused deposit wrote to Redis"


@points(1)
@hint("add-up")
def test_deposits_from_many_processes_add_up_hidden(lab, redis):
    results = lab.run_concurrently([("deposit", (9, 25))] * 60, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"deposit raised: {errors[0]}"
    assert redis.get(redis.key("balance", 9)) == "1500", "some deposits were lost"


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


@points(2)
@hint("overdraft-race")
def test_concurrent_withdrawals_never_overdraw_hidden(lab, redis):
    # Several rounds: in each, four processes try to take the same last 100 cents at the same moment.
    proxies = lab.parallel(4)
    try:
        for round_ in range(12):
            account = 100 + round_
            redis.set(redis.key("balance", account), 100)
            results = at_once(proxies, "withdraw", account, 100)
            ok = [res for res in results if not isinstance(res, Exception)]
            refused = [res for res in results if isinstance(res, StudentError) and res.type == "ValueError"]
            others = [res for res in results if isinstance(res, Exception) and not any(res is x for x in refused)]
            assert not others, f"withdraw failed unexpectedly: {others[0]}"
            balance = redis.get(redis.key("balance", account))
            assert balance == "0", f"100 cents, four withdrawals of 100 at once: the balance ended at {balance}"
            assert ok == [0] and len(refused) == 3, f"{len(ok)} of four withdrawals of the last 100 cents succeeded"
    finally:
        for p in proxies:
            p.close()
