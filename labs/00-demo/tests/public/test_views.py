"""Public tests of lab 00: run them with `python3 run.py check 00`."""
from redis_course.labs.testing import hint, points


@points(2)
@hint("first-view")
def test_first_view_is_one(lab, redis):
    assert lab.count_view(17) == 1
    assert redis.get(redis.key("views", "post", 17)) == "1"


@points(2)
@hint("add-up")
def test_views_from_many_processes_add_up(lab, redis):
    results = lab.run_concurrently([("count_view", (5,))] * 40, processes=4)
    errors = [res for res in results if isinstance(res, Exception)]
    assert not errors, f"count_view raised: {errors[0]}"
    assert sorted(results) == list(range(1, 41))
    assert redis.get(redis.key("views", "post", 5)) == "40"


@points(1)
@hint("reset")
def test_reset_returns_count_and_clears(lab, redis):
    redis.set(redis.key("views", "post", 8), 3)
    assert lab.reset(8) == 3
    assert redis.exists(redis.key("views", "post", 8)) == 0
    assert lab.count_view(8) == 1
