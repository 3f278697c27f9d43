"""Public tests of lab 00: run them with `python3 run.py check 00`."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import hint, points


@points(2)
@hint("first-view")
def test_first_view_is_one(lab, redis):
    """The first view of a post counts 1"""
    seen = lab.count_view(17)
    assert seen == 1, _("count_view(17) on a new post returned {seen!r}, expected 1", seen=seen)
    stored = redis.get(redis.key("views", "post", 17))
    assert stored == "1", _("after one view the key views:post:17 holds {stored!r}, expected \"1\"", stored=stored)


@points(2)
@hint("add-up")
def test_views_from_many_processes_add_up(lab, redis):
    """Views counted by 4 processes at once are all kept"""
    results = lab.run_concurrently([("count_view", (5,))] * 40, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]  # raised, timed out or crashed
    if errors:
        raise errors[0]
    stored = redis.get(redis.key("views", "post", 5))
    assert stored == "40", _("40 views from 4 processes left {stored!r} in views:post:5, expected \"40\"",
                             stored=stored)
    assert sorted(results) == list(range(1, 41)), _(
        "the 40 calls returned {seen}, expected each number from 1 to 40 once", seen=sorted(results)[:10])


@points(1)
@hint("reset")
def test_reset_returns_count_and_clears(lab, redis):
    """Reset returns the old count and deletes the key"""
    redis.set(redis.key("views", "post", 8), 3)
    seen = lab.reset(8)
    assert seen == 3, _("reset(8) of a post with 3 views returned {seen!r}, expected 3", seen=seen)
    assert redis.exists(redis.key("views", "post", 8)) == 0, _("after reset(8) the key views:post:8 still exists")
    seen = lab.count_view(8)
    assert seen == 1, _("count_view(8) after a reset returned {seen!r}, expected 1", seen=seen)
