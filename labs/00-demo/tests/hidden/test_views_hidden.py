"""Hidden tests of lab 00: only the grader runs these."""
from redis_course.l10n import _
from redis_course.labs.engine.testing import hint, points

GRADER_CANARY = "grader-canary-00-demo-6d1f3b2a"  # the release test proves this never leaves the repo


@points(2)
@hint("separate-keys")
def test_posts_are_counted_separately_hidden(lab, redis):
    """Each post of the grader canary has a counter of its own"""
    seen = [lab.count_view(90210), lab.count_view(90210), lab.count_view(90211)]
    assert seen == [1, 2, 1], _("hidden canary check: two views of one post and one of another returned {seen}, "
                                "expected [1, 2, 1]", seen=seen)
    stored = redis.get(redis.key("views", "post", 90211))
    assert stored == "1", _("hidden canary check: views:post:90211 holds {stored!r}, expected \"1\"", stored=stored)


@points(1)
@hint("reset-unknown")
def test_reset_of_never_viewed_post_is_zero_hidden(lab, redis):
    """Resetting a canary post nobody viewed returns zero"""
    seen = lab.reset(424242)
    assert seen == 0, _("hidden canary check: reset of a post never viewed returned {seen!r}, expected 0", seen=seen)
    assert redis.exists(redis.key("views", "post", 424242)) == 0, _(
        "hidden canary check: reset of a post never viewed created its key")
