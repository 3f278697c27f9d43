"""Hidden tests of lab 03: only the grader runs these."""
import time
from datetime import datetime, timezone

from redis_course.l10n import _
from redis_course.labs.engine.testing import InjectedCrash, contract, hint, points

GRADER_CANARY = "grader-canary-03-counters-9b27e4c1"  # the release test proves this never leaves the repo


def returns(call, expected, seen):
    """The failure message of a function that returned something else."""
    return _("expected {call} to return {expected}, saw {seen}").format(call=call, expected=expected, seen=seen)


def holds(key, expected, seen):
    """The failure message of a key that holds something else."""
    return _("expected {key} to hold {expected}, saw {seen}").format(key=key, expected=expected, seen=seen)


def ts(*args) -> float:
    return datetime(*args, tzinfo=timezone.utc).timestamp()


NOON = ts(2024, 3, 5, 12, 0)


def server_ms(redis) -> int:
    sec, usec = redis.time()
    return sec * 1000 + usec // 1000


def expiry(redis, key) -> tuple[int, int]:
    """(the server's time in ms, the key's PTTL), read in one MULTI/EXEC."""
    with redis.pipeline() as tx:
        tx.time()
        tx.pttl(key)
        (sec, usec), pttl = tx.execute()
    return sec * 1000 + usec // 1000, pttl


def keys_without_ttl(redis) -> list[str]:
    """This run's counter and ranking keys that exist without a TTL."""
    found = redis.course_keys("views:*") + redis.course_keys("top:*")
    return [redis.unprefixed(k) for k in found if redis.pttl(k) == -1]


@points(2)
@hint("utc-day")
@contract("day-of-utc", "machine-zone-ignored")
def test_day_boundary_is_utc_whatever_the_machine_zone_hidden(lab, redis):
    """The day is UTC's whatever the machine's time zone."""
    late = ts(2024, 3, 5, 23, 30)  # 23:30 UTC: already 6 March in Tokyo, still 5 March in New York
    early = ts(2024, 3, 6, 0, 30)  # 00:30 UTC: still 5 March in New York
    try:
        for zone in ["Asia/Tokyo", "America/New_York"]:
            lab.faults.set_machine_timezone(zone)
            for when, expected in ((late, "2024-03-05"), (early, "2024-03-06")):
                seen = lab.day_of(when)
                assert seen == expected, _(
                    "expected day_of({when}) to return {expected} with the machine in {zone}, saw {seen}").format(
                    when=when, expected=expected, zone=zone, seen=seen)
        lab.record_view("home", late)
        lab.record_view("home", early)
    finally:
        lab.faults.set_machine_timezone(None)
    for day in ("2024-03-05", "2024-03-06"):
        seen = redis.get(redis.key("views", "home", day))
        assert seen == "1", holds(f"views:home:{day}", 1, seen)


@points(2)
@hint("expire-every-hit")
@contract("ttl-never-extended")
def test_later_views_do_not_extend_the_ttl_hidden(lab, redis):
    """Later views do not extend the TTL set when the key was created."""
    lab.record_view("home", NOON, 2000)
    time.sleep(0.3)
    lab.record_view("home", NOON, 2000)
    for key in (redis.key("views", "home", "2024-03-05"), redis.key("top", "2024-03-05")):
        left = redis.pttl(key)
        # created 300+ ms ago with 2000 ms: at most 1700 ms left; a TTL set again would be near 2000
        assert 0 < left <= 1850, _(
            "expected {key} to have at most 1850 ms left, saw {seen}: the TTL was extended").format(
            key=redis.unprefixed(key), seen=left)


@points(3)
@hint("day-closes")
@contract("day-closes-at-midnight", "machine-zone-ignored")
def test_the_day_closes_at_utc_midnight_under_steady_traffic_hidden(lab, redis):
    """Views every second across UTC midnight: the new day starts at 1, the old day keeps its count."""
    evening = ts(2024, 3, 5, 23, 59, 50)
    try:
        lab.faults.set_machine_timezone("America/New_York")  # still 5 March there: the day is UTC's
        seen = [lab.record_view("home", evening + k) for k in range(20)]  # 23:59:50 .. 00:00:09
    finally:
        lab.faults.set_machine_timezone(None)
    expected = list(range(1, 11)) + list(range(1, 11))
    assert seen == expected, _("expected the counts {expected}, saw {seen}").format(expected=expected, seen=seen)
    old, new = redis.key("views", "home", "2024-03-05"), redis.key("views", "home", "2024-03-06")
    counts = (redis.get(old), redis.get(new))
    assert counts == ("10", "10"), _("expected 10 views on 5 and on 6 March, saw {seen}").format(seen=counts)
    week = lab.last_7_days("home", ts(2024, 3, 6, 12, 0))
    assert week[-2:] == [10, 10], _("expected the last two days of the week to be [10, 10], saw {seen}").format(
        seen=week)


@points(2)
@hint("ttl-ms")
@contract("ttl-milliseconds")
def test_the_ttl_is_exact_to_the_millisecond_hidden(lab, redis):
    """A TTL of 1500 ms is 1500 ms on both keys, not 1 s or 2 s, and a TTL below a second still holds."""
    for day, when, ttl in (("2024-03-05", NOON, 1500), ("2024-03-06", NOON + 86400, 700)):
        before = server_ms(redis)
        lab.record_view("home", when, ttl)
        for key in (redis.key("views", "home", day), redis.key("top", day)):
            now, left = expiry(redis, key)
            # what the call and this read took, on the server's clock: a busy machine is no wrong TTL
            waited = now - before
            if left == -2 and waited >= ttl:
                continue  # gone, and rightly so: its TTL is up
            assert ttl - waited - 2 <= left <= ttl, _(
                "expected {key} to have about {ttl} ms left, saw {seen}").format(
                key=redis.unprefixed(key), ttl=ttl, seen=left)


@points(3)
@hint("crash")
@contract("record-view-one-unit", "ttl-on-creation")
def test_a_crash_between_commands_leaves_no_key_without_ttl_hidden(lab, redis):
    """A process that dies between two round trips leaves no key without a TTL."""
    crashed = 0
    for budget in range(0, 4):  # the process dies after 0, 1, 2, 3 round trips
        page = f"page-{budget}"
        day = NOON + 86400 * budget  # a new day: new keys every time
        assert lab.faults.arm_crash(budget) is True
        try:
            lab.record_view(page, day)
        except InjectedCrash:  # only the grader's own fault counts, whatever the module defines
            crashed += 1
        finally:
            lab.faults.arm_crash(None)
        assert keys_without_ttl(redis) == [], _(
            "expected every key to have a TTL after a crash following round trip {n}, saw these without one: "
            "{seen}").format(n=budget, seen=keys_without_ttl(redis))
        d = datetime.fromtimestamp(day, timezone.utc).strftime("%Y-%m-%d")
        counted = redis.get(redis.key("views", page, d))
        ranked = redis.zscore(redis.key("top", d), page)
        assert (counted, ranked) in ((None, None), ("1", 1.0)), _(
            "expected a crash following round trip {n} to leave the view counted in both keys or nothing "
            "written, saw the counter {counter!r} and the ranking's score {score!r}").format(
            n=budget, counter=counted, score=ranked)
    assert crashed >= 1, _("expected at least one crash, saw {seen}").format(seen=crashed)


@points(2)
@hint("read-modify-write")
@contract("record-view-concurrent")
def test_concurrent_views_are_all_counted_hidden(lab, redis):
    """Two hundred views from eight processes at once are all counted."""
    results = lab.run_concurrently([("record_view", ("home", NOON))] * 200, processes=8)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, _("expected no error, saw {seen}").format(seen=errors[:1])
    assert sorted(results) == list(range(1, 201)), _(
        "expected each count from 1 to 200 returned once, saw {seen}").format(seen=sorted(results)[:10])
    seen = redis.get(redis.key("views", "home", "2024-03-05"))
    assert seen == "200", holds("views:home:2024-03-05", 200, seen)
    seen = redis.zscore(redis.key("top", "2024-03-05"), "home")
    assert seen == 200, holds("top:2024-03-05 home", 200, seen)


@points(1)
@hint("read-modify-write")
@contract("record-view-concurrent")
def test_a_view_recorded_between_two_requests_is_not_lost_hidden(lab, redis):
    """A view another process records between record_view's own requests is kept."""
    counter, top = redis.key("views", "aside", "2024-03-05"), redis.key("top", "2024-03-05")
    for _i in range(5):
        lab.record_view("aside", NOON)

    def another_view():
        redis.incr(counter)
        redis.zincrby(top, 1, "aside")

    seen, between = lab.call_between("record_view", ("aside", NOON), after_key=counter, between=another_view)
    assert not isinstance(seen, Exception), _("expected no error, saw {seen}").format(seen=seen)
    # one script or one MULTI block sent at once never waits: 6; a request after the one that named the
    # counter waits while another process records a view: 7 in all, and this call's count is 6 or 7
    want = 7 if between else 6
    stored = redis.get(counter)
    assert stored == str(want), _("expected {want} views counted, saw {seen}: the view another process recorded "
                                  "between record_view's requests was lost").format(want=want, seen=stored)
    score = redis.zscore(top, "aside")
    assert score == want, holds("top:2024-03-05 aside", want, score)
    assert seen in ((6, 7) if between else (6,)), returns("record_view", want, seen)


@points(1)
@hint("week")
@contract("reading-creates-nothing")
def test_reading_creates_nothing_hidden(lab, redis):
    """Reading the week, today and the ranking creates no key."""
    for call, args, expected in [("last_7_days", ("never-seen", NOON), [0] * 7),
                                 ("views_today", ("never-seen", NOON), 0), ("top_pages", (NOON, 5), [])]:
        seen = getattr(lab, call)(*args)
        assert seen == expected, returns(call, expected, seen)
    seen = [redis.unprefixed(k) for k in redis.course_keys("*")]
    assert seen == [], _("expected reading to create no key, saw {seen}").format(seen=seen)


@points(1)
@hint("top")
@contract("top-pages")
def test_top_pages_count_only_that_day_hidden(lab, redis):
    """top_pages counts only the views of the day asked for."""
    for _ in range(4):
        lab.record_view("old-news", NOON - 86400)
    lab.record_view("home", NOON)
    lab.record_view("home", NOON)
    lab.record_view("about", NOON)
    lab.record_view("contact", NOON)  # tied with about: ZREVRANGE's order, the later name first
    for args, expected in [((NOON, 10), [["home", 2], ["contact", 1], ["about", 1]]),
                           ((NOON - 86400, 1), [["old-news", 4]])]:
        seen = lab.top_pages(*args)
        assert seen == expected, returns("top_pages", expected, seen)


@points(2)
@hint("server-clock")
@contract("ttl-server-clock", "machine-zone-ignored")
def test_ttl_is_on_the_servers_clock_whatever_the_machines_clock_hidden(lab, redis):
    """The TTL is measured on the server's clock, whatever the machine's clock says."""
    # a TTL of a minute: a clock an hour off shows, a busy machine's seconds do not
    for offset_s in (-3600, 3600):
        day = "2024-03-%02d" % (7 if offset_s < 0 else 8)
        when = ts(2024, 3, 7 if offset_s < 0 else 8, 12, 0)
        try:
            lab.faults.set_machine_clock(offset_s)
            lab.record_view("home", when, 60_000)
        finally:
            lab.faults.set_machine_clock(None)
        for key in (redis.key("views", "home", day), redis.key("top", day)):
            left = redis.pttl(key)
            assert 30_000 <= left <= 60_000, _(
                "expected {key} to expire in 30000 to 60000 ms with the machine's clock {offset} s off, "
                "saw a PTTL of {seen} ms").format(key=redis.unprefixed(key), offset=offset_s, seen=left)


@points(1)
@hint("utc-day")
@contract("last-7-days")
def test_the_week_is_seven_calendar_days_at_any_second_of_today_hidden(lab, redis):
    """last_7_days gives the same seven calendar days a second after midnight and a second before the next"""
    for day, views in [(27, 1), (28, 2), (29, 3)]:  # 2024 is a leap year
        for _view in range(views):
            lab.record_view("docs", ts(2024, 2, day, 12, 0))
    for _view in range(4):
        lab.record_view("docs", NOON)
    want = [2, 3, 0, 0, 0, 0, 4]  # 28 Feb .. 5 Mar
    for now in (ts(2024, 3, 5, 0, 0, 1), ts(2024, 3, 5, 23, 59, 58)):
        seen = lab.last_7_days("docs", now)
        assert seen == want, returns(f"last_7_days at {datetime.fromtimestamp(now, timezone.utc):%H:%M:%S} UTC",
                                     want, seen)
