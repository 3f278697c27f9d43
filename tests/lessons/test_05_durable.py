"""Lesson 05: the claims of the page and the notebook, on fakeredis and on the real server (``r``).

The ledger is SQLite; with ``DATABASE_URL`` set the flush tests also run on PostgreSQL.
"""

from __future__ import annotations

import os
import threading

import pytest
import redis as redis_py

from redis_course import connect
from redis_course.lessons import durable as d
from redis_course.core.servers import redis_server_binary

LEDGERS = ["sqlite"] + (["postgres"] if os.environ.get("DATABASE_URL") else [])
T = 1_700_000_000


@pytest.fixture(params=LEDGERS)
def ledger(request, tmp_path, monkeypatch):
    if request.param == "sqlite":
        monkeypatch.delenv("DATABASE_URL", raising=False)
    with d.temporary_ledger() as ledger:
        yield ledger


# ---------------------------------------------------------------------- flushes


@pytest.mark.parametrize(
    "flush,expected",
    [
        (d.flush_naive, {"claimed": 11, "applied": 11, "committed": 21}),  # counts 10 twice
        (d.flush_getdel, {"claimed": 1, "applied": 1, "committed": 11}),  # loses 10
        (d.flush_safe, {"claimed": 11, "applied": 11, "committed": 11}),
    ],
)
def test_crash_at_every_step(r, ledger, flush, expected):
    for step in d.STEPS:
        name = f"{flush.__name__}-{step}"
        r.incrby(r.key("counter", name), 10)
        with pytest.raises(d.SimulatedCrash):
            flush(r, ledger, name, crash_at=step)
        r.incr(r.key("counter", name))
        flush(r, ledger, name)
        flush(r, ledger, name)
        assert ledger.total(name) == expected[step], step


def test_safe_flush_invariant_holds_between_crashes(r, ledger):
    name = "inv"
    r.incrby(r.key("counter", name), 5)
    made = 5
    for step in d.STEPS + d.STEPS:
        with pytest.raises(d.SimulatedCrash):
            d.flush_safe(r, ledger, name, crash_at=step)
        r.incr(r.key("counter", name))
        made += 1
        assert d.counted(r, ledger, name) == made
    d.flush_safe(r, ledger, name)
    d.flush_safe(r, ledger, name)
    assert ledger.total(name) == made
    assert r.exists(*d.pending_keys(r, name)[:3]) == 0


def test_flush_under_traffic(r, ledger, backend_url):
    def client():
        return connect(backend_url, prefix=r.prefix)

    lost = d.flush_under_traffic(r, ledger, d.flush_naive, "naive", per_incrementer=400, connect=client)
    safe = d.flush_under_traffic(r, ledger, d.flush_safe, "safe", per_incrementer=400, connect=client)
    assert lost["lost"] > 0
    assert safe["lost"] == 0 and safe["in_sql"] == safe["increments"]


def test_two_flushers_share_one_pending_value(r, ledger):
    r.incrby(r.key("counter", "c"), 4)
    with pytest.raises(d.SimulatedCrash):
        d.flush_safe(r, ledger, "c", crash_at="committed")  # applied, pending still there
    assert d.flush_safe(r, ledger, "c") == 0  # the second flusher sees the id: no-op
    assert ledger.total("c") == 4


# ---------------------------------------------------------------------- DECR


def test_undo_view_once(r):
    r.set(r.key("views", "p"), 10)
    assert [d.undo_view(r, "p", "v1") for _ in range(3)] == [9, 9, 9]
    assert d.undo_view(r, "p", "v2") == 8


def test_decr_first_never_oversells(r, backend_url):
    key = r.key("seats")
    r.set(key, 50)
    sold = []

    def buyer():
        c = connect(backend_url, prefix=r.prefix)
        sold.append(sum(d.take_one(c, key) for _ in range(10)))

    threads = [threading.Thread(target=buyer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(sold) == 50
    assert r.get(key) == "0"


# ---------------------------------------------------------------------- the article's queue


def test_article_mset_makes_three_strings(r):
    assert r.execute_command("MSET", *[r.key(f"BUCKET{i}") for i in range(1, 7)]) is True
    assert r.get(r.key("BUCKET1")) == r.key("BUCKET2")
    assert r.exists(r.key("BUCKET2")) == 0
    with pytest.raises(redis_py.exceptions.ResponseError, match="WRONGTYPE"):
        r.zadd(r.key("BUCKET1"), {"1": T})
    # An odd number of arguments: the error text differs (so the page shows no such transcript)
    text = (
        "Wrong number of args calling Redis command from script"
        if r.is_fake
        else "wrong number of arguments for 'mset' command"
    )
    with pytest.raises(redis_py.exceptions.ResponseError, match=text):
        r.execute_command("MSET", r.key("a"), "1", r.key("b"))


def test_article_drops_long_delays_and_payloads(r):
    assert d.article_add_task(r, "renew", 90, now=T) is None
    assert r.get(r.key("task_id")) == "1"  # the id was spent
    assert r.course_keys("bucket*") == []
    assert d.article_add_task(r, "report", 5, now=T) == 2
    assert r.course_keys("task2") == [] and r.course_keys("*report*") == []


def test_article_loop_runs_tasks_ten_seconds_early(r):
    d.article_add_task(r, "report", 9, now=T)
    ran = []
    d.article_check_task(r, T, ran.append)
    assert ran == []
    d.article_loop_once(r, T, ran.append)
    assert ran == ["1"]


def test_article_zrangebyscore_then_zrem_runs_a_task_twice(r):
    bucket = r.key("bucket1")
    r.zadd(bucket, {"41": T - 1})
    a, b = r.zrangebyscore(bucket, 0, T), r.zrangebyscore(bucket, 0, T)
    assert a == b == ["41"]
    assert [r.zrem(bucket, "41"), r.zrem(bucket, "41")] == [1, 0]  # ZREM knew; the article ignores it


# ---------------------------------------------------------------------- the reliable queue


def test_claim_lease_recover_ack(r):
    ids = [d.schedule(r, p, due) for p, due in [("a", 1000), ("b", 3000), ("c", 2000)]]
    assert ids == [1, 2, 3]
    assert d.claim(r, 999, 500) == []
    assert d.claim(r, 2000, 500) == [[1, "a", 1], [3, "c", 1]]
    assert d.recover(r, 2499) == 0 and d.recover(r, 2500) == 2
    again = d.claim(r, 2500, 500)
    assert again == [[1, "a", 2], [3, "c", 2]]
    assert d.ack(r, 1, 1) is False  # stale claim
    assert all(d.ack(r, i, a) for i, _, a in again)
    assert d.ack(r, 1, 2) is False  # already acknowledged
    assert d.claim(r, 3000, 500) == [[2, "b", 1]]
    assert d.waiting(r) == 1


def test_concurrent_claims_never_share_a_task(r, backend_url):
    for i in range(400):
        d.schedule(r, f"p{i}", i)
    got, lock = [], threading.Lock()

    def worker():
        c = connect(backend_url, prefix=r.prefix)
        while rows := d.claim(c, 10_000, 60_000, 7):
            with lock:
                got.extend(row[0] for row in rows)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 401))


@pytest.mark.real_redis
def test_worker_processes_with_one_killed(r, backend_url):
    if backend_url is None:
        pytest.skip("processes cannot share an in-process fakeredis")
    res = d.run_queue(backend_url, r.prefix, tasks=600, spread_ms=600, lease_ms=300)
    assert res["killed_exit"] == -9
    assert res["missing"] == 0 and res["after_ack"] == 0 and res["left"] == 0


# ---------------------------------------------------------------------- persistence


@pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")
def test_sigkill_loses_rdb_writes_but_not_aof():
    rdb = d.measure_loss("rdb", seconds=0.3)  # no snapshot can start within the first second
    everysec = d.measure_loss("aof-everysec", seconds=0.3)
    always = d.measure_loss("aof-always", seconds=0.3)
    assert rdb["acked"] > 0 and rdb["survived"] == 0
    # everysec write()s before replying: a killed process loses nothing (a power cut could)
    assert everysec["acked"] > 0 and everysec["lost"] == 0
    assert always["acked"] > 0 and always["lost"] == 0
