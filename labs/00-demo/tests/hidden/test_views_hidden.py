"""Hidden tests of lab 00: only the grader runs these."""
from redis_course.labs.testing import hint, points

GRADER_CANARY = "grader-canary-00-demo-6d1f3b2a"  # the release test proves this never leaves the repo


@points(2)
@hint("separate-keys")
def test_posts_are_counted_separately_hidden(lab, redis):
    assert lab.count_view(90210) == 1
    assert lab.count_view(90210) == 2
    assert lab.count_view(90211) == 1
    assert redis.get(redis.key("views", "post", 90211)) == "1"


@points(1)
@hint("reset-unknown")
def test_reset_of_never_viewed_post_is_zero_hidden(lab, redis):
    assert lab.reset(424242) == 0
    assert redis.exists(redis.key("views", "post", 424242)) == 0
