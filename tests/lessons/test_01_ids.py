"""Lesson 01: ids from INCR are handed out again after a restart that loses writes; what prevents it.

Each test starts private redis-server processes (SIGKILL and restart on the same data directory),
so it runs where the binary is installed, whatever backend the rest of the suite uses.
"""

from __future__ import annotations

import sqlite3

import pytest

from redis_course.lessons import ids
from redis_course.core.servers import redis_server_binary

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


@needs_server
def test_default_persistence_hands_ids_out_twice_after_a_crash():
    run = ids.reissued_after_restart("default", handed_out=150, snapshot_at=100)
    assert run["survived"] == 100 and run["next_id"] == 101 and run["reissued"] == 50


@needs_server
@pytest.mark.parametrize("mode", ["aof-everysec", "aof-always"])
def test_aof_keeps_every_id_through_sigkill(mode):
    run = ids.reissued_after_restart(mode, handed_out=150, snapshot_at=100)
    assert run["survived"] == 150 and run["next_id"] == 151 and run["reissued"] == 0


@needs_server
def test_epoch_ids_never_repeat_across_a_restart(tmp_path):
    run = ids.epoch_ids_across_restart(str(tmp_path / "epochs.db"), handed_out=150, snapshot_at=100, after=60)
    assert run["numbers_twice"] == 50  # the bare INCR numbers 101..150 came back
    assert run["ids_twice"] == 0  # with their epoch they are new ids
    assert run["before"] == ("1-1", "1-150") and run["after"] == ("2-101", "2-160")


def test_a_database_sequence_is_not_reused(tmp_path):
    path = str(tmp_path / "ids.db")
    assert [ids.sequence_id(path) for _ in range(3)] == [1, 2, 3]
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM order_ids")  # even when every row is gone
    assert ids.sequence_id(path) == 4


@needs_server
def test_waitaof_needs_redis_7_2_and_wait_reports_replicas():
    from redis_course.core.servers import private_redis

    with private_redis("aof-always") as srv:
        c = srv.client(prefix="")
        version = tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:2])
        c.incr("ids:order")
        assert c.execute_command("WAIT", 0, 100) == 0  # no replica has it: WAIT only reports
        if version < (7, 2):
            with pytest.raises(Exception, match="unknown command"):
                c.execute_command("WAITAOF", 1, 0, 100)
        else:
            assert c.execute_command("WAITAOF", 1, 0, 100) == [1, 0]


def test_epoch_ids_need_info_which_fakeredis_lacks(r, tmp_path):
    gen = ids.EpochIds(r, r.key("ids", "order"), str(tmp_path / "epochs.db"))
    if r.is_fake:
        with pytest.raises(Exception, match="unknown command 'info'"):
            gen.next()
    else:
        first, second = gen.next(), gen.next()
        assert first.split("-")[0] == second.split("-")[0] == "1"
        assert int(second.split("-")[1]) == int(first.split("-")[1]) + 1
