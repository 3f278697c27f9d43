"""Attack: functions without the Redis client parameter."""


def count_view(post_id):
    return 1


def reset():
    return 0
