"""Lesson 02: claims of the atomicity page that no transcript shows, on fakeredis and the real server.

Each test runs on both backends (the ``r`` fixture).  Races use threads with their own clients and
a 1 ms pause between read and write, as the notebook does, so they show on fakeredis too.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

from redis_course import connect
from redis_course.lessons import atomicity
from redis_course.lessons.money import WITHDRAW  # the script the page shows (it includes it from there)
from redis_course.core.servers import private_redis, redis_server_binary


@pytest.fixture
def new_client(r, backend_url):
    """Another client on the same data as ``r`` (same backend, same prefix), one per call."""
    return lambda: connect(backend_url or "", prefix=r.prefix)


def run_threads(n, target, *args):
    threads = [threading.Thread(target=target, args=args) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_get_then_set_loses_updates_and_incr_does_not(r, new_client):
    key_gs, key_incr = r.key("gs"), r.key("incr")

    def get_then_set():
        c = new_client()
        for _ in range(10):
            value = int(c.get(key_gs) or 0)
            time.sleep(0.001)
            c.set(key_gs, value + 1)

    def incr():
        c = new_client()
        for _ in range(10):
            c.incr(key_incr)

    run_threads(8, get_then_set)
    run_threads(8, incr)
    assert int(r.get(key_incr)) == 80
    assert int(r.get(key_gs)) < 80  # 8 clients with a 1 ms window: updates are lost


def test_exec_does_not_roll_back_a_failed_command(r):
    r.set(r.key("balance"), 100)
    r.set(r.key("name"), "alice")
    with r.pipeline() as pipe:
        pipe.decrby(r.key("balance"), 30)
        pipe.incr(r.key("name"))
        replies = pipe.execute(raise_on_error=False)
    assert replies[0] == 70
    assert isinstance(replies[1], redis.ResponseError)
    assert str(replies[1]) == "value is not an integer or out of range"
    assert r.get(r.key("balance")) == "70"
    with pytest.raises(redis.ResponseError):  # raise_on_error=True: raised after everything ran
        with r.pipeline() as pipe:
            pipe.decrby(r.key("balance"), 30)
            pipe.incr(r.key("name"))
            pipe.execute()
    assert r.get(r.key("balance")) == "40"


def test_an_error_while_queueing_discards_the_whole_block(r):
    r.set(r.key("balance"), 70)
    with r.pipeline() as pipe:
        pipe.incrby(r.key("balance"), 5)
        pipe.execute_command("INCR")
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            pipe.execute()
    assert r.get(r.key("balance")) == "70"


@pytest.mark.parametrize("writer", ["other client", "same connection"])
def test_watch_aborts_exec_after_any_write(r, writer, new_client):
    key = r.key("balance")
    r.set(key, 100)
    with r.pipeline() as pipe:
        pipe.watch(key)
        seen = int(pipe.get(key))
        if writer == "other client":
            new_client().incrby(key, 1000)
        else:
            pipe.set(key, 0)  # immediate mode: this connection writes
        pipe.multi()
        pipe.set(key, seen - 10)
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get(r.key("balance")) in ("1100", "0")


def test_watch_retries_keep_every_update(r, new_client):
    key, retries = r.key("watched"), []

    def deposit():
        c, mine = new_client(), 0
        for _ in range(5):
            while True:
                with c.pipeline() as pipe:
                    try:
                        pipe.watch(key)
                        current = int(pipe.get(key) or 0)
                        time.sleep(0.001)
                        pipe.multi()
                        pipe.set(key, current + 1)
                        pipe.execute()
                        break
                    except redis.WatchError:
                        mine += 1
        retries.append(mine)

    run_threads(8, deposit)
    assert int(r.get(key)) == 40
    assert sum(retries) > 0  # contention made some clients retry


def test_withdraw_script_from_the_page(r):
    key = r.key("balance")
    r.set(key, 100)
    script = r.register_script(WITHDRAW)
    assert script(keys=[key], args=[30]) == 70
    assert script(keys=[key], args=[500]) == -1
    assert r.get(key) == "70"
    assert r.evalsha(r.script_load(WITHDRAW), 1, key, 30) == 40


def test_withdraw_script_never_overdraws_under_contention(r, new_client):
    key, results = r.key("drain"), []
    r.set(key, 100)

    def drain():
        script = new_client().register_script(WITHDRAW)
        mine = [script(keys=[key], args=[1]) for _ in range(10)]
        results.extend(mine)

    run_threads(16, drain)
    assert r.get(key) == "0"
    assert sum(1 for x in results if x >= 0) == 100
    assert results.count(-1) == 60


def test_script_error_text_differs_as_the_page_says(r):
    r.set(r.key("name"), "alice")
    with pytest.raises(redis.ResponseError) as info:
        r.eval("return redis.call('INCR', KEYS[1])", 1, r.key("name"))
    text = str(info.value)
    assert text.split(" script: ")[0] == "value is not an integer or out of range"
    if r.is_fake:
        assert text == "value is not an integer or out of range"
    else:
        assert " script: " in text and "@user_script:1" in text


def test_a_script_that_fails_half_way_keeps_its_earlier_writes(r):
    balance, name = r.key("balance"), r.key("name")
    r.set(balance, 100)
    r.set(name, "alice")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range"):
        r.eval(atomicity.MOVE, 2, balance, name, 30)
    assert r.get(balance) == "70"  # no rollback: the DECRBY before the error stays
    assert r.get(name) == "alice"


@pytest.mark.parametrize(
    "target_value, amount, error",
    [
        ("alice", 30, "both keys must hold integers"),
        ("007", 30, "both keys must hold integers"),  # INCRBY would refuse it after the DECRBY
        ("9" * 16, 30, "both keys must hold integers"),  # a sum could overflow or lose precision
        (None, "1.5", "amount must be a positive integer"),
        (None, "-3", "amount must be a positive integer"),
        (None, "0", "amount must be a positive integer"),
        (None, "1e3", "amount must be a positive integer"),
    ],
)
def test_transfer_checks_everything_before_its_first_write(r, target_value, amount, error):
    balance, target = r.key("balance"), r.key("target")
    r.set(balance, 100)
    if target_value is not None:
        r.set(target, target_value)
    with pytest.raises(redis.ResponseError, match=f"^{error}"):
        r.eval(atomicity.TRANSFER, 2, balance, target, amount)
    assert r.get(balance) == "100" and r.get(target) == target_value


def test_transfer_moves_or_refuses(r):
    balance, target = r.key("balance"), r.key("target")
    r.set(balance, 100)
    assert r.eval(atomicity.TRANSFER, 2, balance, target, 500) == -1
    assert r.mget(balance, target) == ["100", None]
    assert r.eval(atomicity.TRANSFER, 2, balance, target, 30) == 30
    assert r.mget(balance, target) == ["70", "30"]


@pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")
def test_io_threads_do_not_read_by_default_before_8():
    with private_redis() as srv:
        c = srv.client(prefix="")
        version = c.info("server")["redis_version"]
        settings = c.config_get("io-threads*")
    assert settings["io-threads"] == "1"
    if int(version.split(".")[0]) < 8:
        assert settings["io-threads-do-reads"] == "no"
