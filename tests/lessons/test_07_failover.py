"""Lesson 07, a primary switch as a client sees it: a planned FAILOVER, an unplanned one (a primary
that dies with writes its replica never got), min-replicas-to-write, and WAIT on both backends.

The switches run on private servers (a primary and its replica); WAIT on the shared server only
waits for this client and changes nothing.  fakeredis has no replication: WAIT, ROLE and FAILOVER
are unknown commands there.
"""

from __future__ import annotations

import time

import pytest
import redis

from redis_course.lessons import guard as g
from redis_course.lessons import switchover as so
from redis_course.core.servers import redis_server_binary

needs_server = pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")


@needs_server
def test_a_planned_failover_loses_nothing_and_leaves_the_old_address_read_only():
    out = so.planned_failover()
    assert out["old_role"] == "slave" and out["new_role"] == "master"
    assert out["lost"] == 0 and out["acked"] == out["on_new_primary"] > 0
    assert set(out["answers"]) == {"ok", "ReadOnlyError"}
    assert out["first_error"].startswith("You can't write against a read only replica")
    assert out["ok_after_first_error"] == 0  # no retry, no new address: READONLY for ever


@needs_server
def test_an_unplanned_failover_loses_what_wait_said_no_replica_had():
    out = so.unplanned_failover(before=10, after_cut=5)
    assert (out["wait_in_sync"], out["wait_after_cut"]) == (1, 0)
    assert out["wait_ms"] >= 90  # WAIT used its whole timeout
    assert out["on_primary_after_wait"] == out["acked"] == 15  # WAIT 0 undid nothing
    assert out["old_address"] == "ConnectionError"
    assert out["stale_read"] == "MasterDownError"
    assert (out["on_new_primary"], out["lost"]) == (10, 5)
    assert out["a_granted"] and out["b_granted_too"]  # one slot, two live holders


@needs_server
def test_min_replicas_to_write_refuses_once_the_replica_lags_and_the_guard_answers_it():
    out = so.min_replicas(max_lag_s=1)
    assert out["error"].startswith("NOREPLICAS")
    assert 0.9 <= out["refused_after_s"] <= 4.5  # lag counted in whole seconds, one ACK a second
    assert out["acked_while_frozen"] > 0  # the window it bounds, not closes
    exc = redis.exceptions.ResponseError(out["error"])
    assert g.no_answer(exc)
    assert g.Guard(lambda: (_ for _ in ()).throw(exc), "closed")() == g.Verdict(False, "closed", "ResponseError")


def test_wait_is_real_redis_only_and_a_timed_out_wait_undoes_nothing(r, backend_url):
    key = r.key("fo", "hits")
    r.incr(key)
    if backend_url is None:
        for command in (("WAIT", 1, 50), ("ROLE",), ("FAILOVER",)):
            with pytest.raises(redis.exceptions.ResponseError, match="unknown command"):
                r.execute_command(*command)
        return
    started = time.monotonic()
    replicas = r.execute_command("WAIT", 1, 50)  # the shared test server has no replica
    assert replicas == 0 and time.monotonic() - started >= 0.04
    assert int(r.get(key)) == 1


@pytest.mark.parametrize(
    "is_master, raised", [(True, redis.exceptions.ConnectionError), (False, redis.exceptions.ReadOnlyError)]
)
def test_a_sentinel_managed_primary_connection_turns_readonly_into_a_reconnect(monkeypatch, is_master, raised):
    """redis-py's own behaviour, no Sentinel needed: a connection of a Sentinel pool for the primary
    that reads READONLY disconnects (the next connect asks Sentinel again) and raises ConnectionError;
    a plain connection passes READONLY on, every time."""
    from redis.sentinel import SentinelManagedConnection

    def readonly(self, *args, **kwargs):
        raise redis.exceptions.ReadOnlyError("You can't write against a read only replica.")

    monkeypatch.setattr(redis.connection.Connection, "read_response", readonly)
    pool = type("Pool", (), {"is_master": is_master, "service_name": "course"})()
    conn = SentinelManagedConnection(connection_pool=pool)
    dropped = []
    monkeypatch.setattr(conn, "disconnect", lambda *a, **k: dropped.append(1))
    with pytest.raises(raised):
        conn.read_response()
    assert dropped == ([1] if is_master else [])
    with pytest.raises(redis.exceptions.ReadOnlyError):
        redis.connection.Connection().read_response()
