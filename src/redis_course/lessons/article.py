"""Lesson 05: DECR to undo a view, taking the last unit, and the seed article's delayed queue as published
(INCR ids, buckets of sorted sets, ZRANGEBYSCORE then ZREM) with its bugs.
"""

from __future__ import annotations

from typing import Callable


UNDO_VIEW = """
-- KEYS: the view counter, the undo marker of this view; ARGV: marker TTL in seconds
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then
  return redis.call('DECR', KEYS[1])
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
"""


def undo_view(r, post: str, view_id: str) -> int:
    """Take back one mistaken view of ``post`` once, however often the undo is retried.

    One EVALSHA: SET undo:<view_id> NX EX (the marker), DECR only if the marker is new.  O(1).
    """
    return r.register_script(UNDO_VIEW)(keys=[r.key("views", post), r.key("undo", view_id)], args=[86400])


def take_one(r, key: str) -> bool:
    """Take one unit of a stock that must not go below zero: DECR, and INCR back if it went below.

    Every DECR that answers >= 0 owns a distinct unit, so nothing is oversold.  Other readers may
    briefly see -1 while a compensating INCR is on its way.  1 or 2 round trips, O(1) each.
    """
    if r.decr(key) >= 0:
        return True
    r.incr(key)
    return False


def take_one_check_first(r, key: str) -> bool:
    """Wrong: GET, check in Python, DECR.  Two clients pass the same check: the stock goes below 0."""
    if int(r.get(key) or 0) <= 0:
        return False
    r.decr(key)
    return True


# ====================================================================== the article's queue


def article_add_task(r, task: str, delay: float, now: float) -> int | None:
    """``addTask`` from the article, with the comparisons the copy lost put back (``<`` 5, 10, 20, 30, 60).

    INCR task_id, then ZADD bucket<N> with the due time in whole seconds.  The payload ``task`` is
    never stored, and a delay of 60 s or more returns before ZADD: the task is silently dropped.
    """
    task_id = r.incr(r.key("task_id"))
    if delay < 5:
        bucket = 1
    elif delay < 10:
        bucket = 2
    elif delay < 20:
        bucket = 3
    elif delay < 30:
        bucket = 4
    elif delay < 60:
        bucket = 5
    else:
        return None
    timestamp = int(now + delay)
    r.zadd(r.key("bucket" + str(bucket)), {task_id: timestamp})
    return task_id


def article_check_task(r, now: float, execute: Callable[[str], None]) -> None:
    """``checkTask``: for each bucket, ZRANGEBYSCORE 0 now, then ZREM and run each id (ZREM's reply ignored)."""
    for i in range(1, 7):
        for task_id in r.zrangebyscore(r.key("bucket" + str(i)), 0, int(now)):
            r.zrem(r.key("bucket" + str(i)), task_id)
            r.delete(r.key("task" + str(task_id)))
            execute(task_id)


def article_loop_once(r, now: float, execute: Callable[[str], None]) -> None:
    """One turn of ``loopTask``: checkTask, then every task due before now + 10 s is run too."""
    article_check_task(r, now, execute)
    for i in range(1, 7):
        task_ids = r.zrangebyscore(r.key("bucket" + str(i)), 0, int(now) + 10)
        for task_id in task_ids:
            r.get(r.key("task" + str(task_id)))
            r.delete(r.key("task" + str(task_id)))
            r.zrem(r.key("bucket" + str(i)), task_id)
            execute(task_id)
