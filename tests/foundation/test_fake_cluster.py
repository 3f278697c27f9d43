"""fakeredis as one node of a cluster (compat.refuse_cross_slot) refuses what a one-node Redis
Cluster refuses, and lets through what it lets through: the same cases on both."""

from __future__ import annotations

import tempfile
from pathlib import Path

import fakeredis
import pytest
import redis

from redis_course.core import compat
from redis_course.cluster.slots import key_slot
from redis_course.core.servers import redis_server_binary

P = "course:fc:"
A, A2, B = P + "{a}:1", P + "{a}:2", P + "{b}:1"  # A and A2 share a slot, B is elsewhere
assert key_slot(A) == key_slot(A2) != key_slot(B)


def _tx(r, *keys):
    with r.pipeline() as tx:
        for k in keys:
            tx.get(k)
        return tx.execute()


def _pipe(r, *keys):
    p = r.pipeline(transaction=False)
    for k in keys:
        p.get(k)
    return p.execute()


CASES = {
    "MGET one slot": lambda r: r.mget(A, A2),
    "MGET two slots": lambda r: r.mget(A, B),
    "DEL two slots": lambda r: r.delete(A, B),
    "MULTI one slot": lambda r: _tx(r, A, A2),
    "MULTI two slots": lambda r: _tx(r, A, B),
    "pipeline two slots": lambda r: _pipe(r, A, B),
    "EVAL declared one slot": lambda r: r.eval("return redis.call('MGET', KEYS[1], KEYS[2])", 2, A, A2),
    "EVAL declared two slots": lambda r: r.eval("return 1", 2, A, B),
    "EVAL uses another slot": lambda r: r.eval("return redis.call('GET', ARGV[1])", 1, A, B),
    "EVAL undeclared two slots": lambda r: r.eval(
        "redis.call('GET', ARGV[1]); return redis.call('GET', ARGV[2])", 0, A, B
    ),
}


def _outcomes(r) -> dict[str, str]:
    r.set(A, 1)
    r.set(A2, 2)
    r.set(B, 3)
    out = {}
    for name, case in CASES.items():
        try:
            case(r)
            out[name] = "ok"
        except redis.ResponseError as exc:
            out[name] = "refused" if "slot" in str(exc) else f"other error: {exc}"
    return out


def test_fakeredis_refuses_commands_across_slots_and_undoes_it():
    undo = compat.refuse_cross_slot(key_slot)
    try:
        got = _outcomes(fakeredis.FakeRedis(server=fakeredis.FakeServer(version=compat.FAKE_SERVER_VERSION)))
    finally:
        undo()
    refused = {"MGET two slots", "DEL two slots", "MULTI two slots", "EVAL declared two slots"}
    assert got == {name: "refused" if name in refused else "ok" for name in CASES}, got
    assert fakeredis.FakeRedis().mget(A, B) == [None, None], "undo() left the check in place"


@pytest.mark.skipif(not redis_server_binary(), reason="redis-server is not installed")
def test_fakeredis_as_a_cluster_node_agrees_with_a_one_node_cluster():
    from redis_course.labs.sandbox.server import RunRedis

    with tempfile.TemporaryDirectory() as tmp:
        server = RunRedis(Path(tmp), "redis-server", cluster=True).start()
        try:
            real = _outcomes(server.client(P))
        finally:
            server.close()
    undo = compat.refuse_cross_slot(key_slot)
    try:
        fake = _outcomes(fakeredis.FakeRedis(server=fakeredis.FakeServer(version=compat.FAKE_SERVER_VERSION)))
    finally:
        undo()
    assert fake == real
