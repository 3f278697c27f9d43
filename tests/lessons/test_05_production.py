"""Lesson 05, what production needs: the 7.x persistence defaults, AOF ``always`` across a failover,
Redis and SQL that one transaction cannot join, at-least-once tasks made idempotent, the stock
script, and the article's remaining defects.

The ``r`` tests run on fakeredis and on the real server; the ledger is SQLite, and PostgreSQL too
when ``DATABASE_URL`` is set.  Persistence and failover start private ``redis-server`` processes.
"""

from __future__ import annotations

import os
import threading

import pytest

from redis_course import connect
from redis_course.lessons import durable as d
from redis_course.lessons import dualwrite as dw
from redis_course.lessons import money
from redis_course.core.servers import private_redis, redis_server_binary

LEDGERS = ["sqlite"] + (["postgres"] if os.environ.get("DATABASE_URL") else [])
T = 1_700_000_000
needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


@pytest.fixture(params=LEDGERS)
def ledger(request, monkeypatch):
    if request.param == "sqlite":
        monkeypatch.delenv("DATABASE_URL", raising=False)
    with d.temporary_ledger() as ledger:
        yield ledger


# ---------------------------------------------------------------------- persistence and failover


@needs_server
def test_redis_7_defaults_are_snapshots_only():
    with private_redis("default") as srv:
        c = srv.client(prefix="")
        got = c.config_get("save", "appendonly")
        major = int(c.info("server")["redis_version"].split(".")[0])
    assert got["appendonly"] == "no"
    if major == 7:
        assert got["save"] == "3600 1 300 100 60 10000"


@needs_server
def test_a_failover_loses_writes_that_aof_always_had_fsynced():
    from redis_course.lessons import failover

    run = failover.failover_with_always(before=100, after_cut=50)
    assert run["acked"] == 150 and run["wait_in_sync"] == 1 and run["wait_after_cut"] == 0
    assert run["old_primary_aof"] == 150  # on the dead primary's disk ...
    assert run["new_primary"] == 100 and run["lost"] == 50
    assert run["old_primary_after_rejoin"] == 100  # ... and gone once it rejoins as a replica


# ---------------------------------------------------------------------- Redis and SQL


@pytest.mark.parametrize(
    "after_commit, step, redis_value, sql_value",
    [
        (False, "redis", 1, 0),  # INCRBY inside the open transaction, death before COMMIT
        (True, "committed", 0, 1),  # INCRBY after COMMIT, death before it is sent
        (False, None, 1, 1),  # nobody dies: only then do they agree
    ],
)
def test_one_sql_transaction_cannot_include_redis(r, ledger, after_commit, step, redis_value, sql_value):
    name = f"dual-{after_commit}-{step}"
    try:
        dw.dual_write(r, ledger, name, 1, redis_after_commit=after_commit, crash_after=step)
    except d.SimulatedCrash:
        assert step is not None
    assert int(r.get(r.key("counter", name)) or 0) == redis_value
    assert ledger.total(name) == sql_value


def test_recorded_events_reach_redis_once_through_the_relay(r, ledger):
    assert dw.record(ledger, "usage", 5, "e:1") is True
    with pytest.raises(d.SimulatedCrash):
        dw.record(ledger, "usage", 7, "e:2", crash_at="applied")  # rolled back
    assert dw.record(ledger, "usage", 5, "e:1") is False  # a retried record
    assert r.get(r.key("counter", "usage")) is None and ledger.total("usage") == 5
    assert dw.relay(r, ledger, "usage") == 1
    dw.record(ledger, "usage", 7, "e:2")
    assert [dw.relay(r, ledger, "usage"), dw.relay(r, ledger, "usage")] == [1, 0]
    assert r.get(r.key("counter", "usage")) == "12" and ledger.total("usage") == 12


# ---------------------------------------------------------------------- at-least-once tasks


def test_a_task_claimed_twice_does_its_work_once_when_keyed_by_its_id(r):
    d.schedule(r, "usage:+500", 1000)
    plain, once = r.key("usage", "plain"), r.key("usage", "once")
    attempts = []
    for now in (1000, 1500):  # lease 500 ms: the first worker never acks
        d.recover(r, now_ms=now)
        for task_id, payload, attempt in d.claim(r, now_ms=now, lease_ms=500):
            attempts.append(attempt)
            r.incrby(plain, 500)
            dw.apply_once(r, once, 500, f"task:{task_id}")
    assert attempts == [1, 2]  # at least once ...
    assert r.get(plain) == "1000"  # ... so plain work runs twice
    assert r.get(once) == "500"


# ---------------------------------------------------------------------- stock


def test_the_stock_script_sells_exactly_the_stock_under_threads(r, backend_url):
    key, sold = r.key("seats"), []
    r.set(key, 100)

    def buyer():
        c = connect(backend_url or "", prefix=r.prefix)
        sold.append(sum(money.withdraw(c, key, 1) >= 0 for _ in range(10)))

    threads = [threading.Thread(target=buyer) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(sold) == 100 and r.get(key) == "0"


# ---------------------------------------------------------------------- the article, continued


def test_bytes_replies_build_keys_like_taskb_1(r, backend_url):
    raw = connect(backend_url or "", prefix=r.prefix, decode_responses=False)
    raw.zadd(r.key("bucket9"), {"1": T})
    task_id = raw.zrangebyscore(r.key("bucket9"), 0, T)[0]
    assert task_id == b"1" and "task" + str(task_id) == "taskb'1'"


def test_the_decr_article_never_calls_decr(r):
    called = set()

    class Recorder:
        def key(self, *parts):
            return r.key(*parts)

        def __getattr__(self, name):
            called.add(name)
            return getattr(r, name)

    d.article_add_task(Recorder(), "send-report", 5, now=T)
    d.article_loop_once(Recorder(), now=T, execute=lambda task_id: None)
    assert called == {"incr", "zadd", "zrangebyscore", "zrem", "delete", "get"}


def test_the_ranges_of_the_text_and_of_the_code_differ(r):
    key = r.key("ranges")
    r.zadd(key, {"-30": T - 30, "-5": T - 5, "0": T, "+5": T + 5, "+15": T + 15})
    assert r.zrangebyscore(key, T - 10, T - 1) == ["-5"]  # the text's window
    assert r.zrangebyscore(key, 0, T) == ["-30", "-5", "0"]  # checkTask
    assert r.zrangebyscore(key, 0, T + 10) == ["-30", "-5", "0", "+5"]  # loopTask: early


def test_typographic_quotes_do_not_compile():
    with pytest.raises(SyntaxError, match="U\\+201C"):
        compile("task_id = conn.incr(\u201ctask_id\u201d)", "article.py", "exec")


def test_the_payload_is_deleted_before_the_task_runs(r):
    r.set(r.key("task7"), "send the report")
    r.zadd(r.key("bucket1"), {"7": T - 1})
    seen = []

    def task(task_id):
        seen.append(r.get(r.key("task" + str(task_id))))
        raise d.SimulatedCrash("died in the task")

    with pytest.raises(d.SimulatedCrash):
        d.article_check_task(r, T, task)
    assert seen == [None]  # the work never saw its payload
    assert r.exists(r.key("task7")) == 0 and r.zscore(r.key("bucket1"), "7") is None  # nothing to retry
