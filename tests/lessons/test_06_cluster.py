"""Lesson 06: the course's local Redis Cluster, slots, CROSSSLOT, sharded counters, failover, and the
one-node cluster the grader uses for lab 06.

Everything that needs a cluster starts one private cluster per module (about 2 s) and stops it;
``course cluster start/status/stop`` is tested as a command, in a temporary state file, and must
leave no process behind.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import redis

from redis_course import paths
from redis_course.cluster import (
    LocalCluster,
    _is_our_server,
    cluster_available,
    crc16,
    default_primary,
    hash_tag,
    key_slot,
    same_slot,
)

needs_cluster = pytest.mark.skipif(not cluster_available(), reason="redis-server / redis-cli not installed")


def _solution():
    path = paths.LABS / "06-cluster" / "solution.py"
    if not path.exists():  # the student edition has no solutions
        pytest.skip("needs the instructor edition's labs/06-cluster/solution.py")
    spec = importlib.util.spec_from_file_location("lab06_solution", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- slots in pure Python


def test_crc16_is_xmodem():
    assert crc16(b"123456789") == 0x31C3  # the check value of CRC16/XMODEM
    assert crc16(b"") == 0


@pytest.mark.parametrize(
    "key,tag",
    [
        ("views", b"views"),
        ("{user:17}:views", b"user:17"),
        ("{}views", b"{}views"),
        ("a{b}{c}", b"b"),
        ("a{b", b"a{b"),
        ("a}b{c}", b"c"),
    ],
)
def test_hash_tag_rules(key, tag):
    assert hash_tag(key) == tag


def test_hash_tags_group_keys():
    assert key_slot("{user:17}:views") == key_slot("{user:17}:likes") == key_slot("user:17")
    assert not same_slot("user:17:views", "user:17:likes")
    assert [default_primary(s) for s in (0, 5460, 5461, 10922, 10923, 16383)] == [0, 0, 1, 1, 2, 2]


# ---------------------------------------------------------------- the command


def _course(*args, state: Path):
    env = dict(os.environ, PYTHONPATH=str(paths.ROOT / "src"))
    code = (
        "import sys; from pathlib import Path; from redis_course import cluster; "
        f"sys.exit(getattr(cluster, 'cli_' + sys.argv[1])(Path({str(state)!r})))"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


@needs_cluster
def test_course_cluster_start_status_stop_leaves_nothing_running(tmp_path):
    state = tmp_path / "cluster.json"
    out = _course("start", state=state)
    assert out.returncode == 0, out.stderr
    info = json.loads(state.read_text())
    pids = {int(port): pid for port, pid in info["pids"].items()}
    try:
        assert len(pids) == 6
        assert all(_is_our_server(pid, port) for port, pid in pids.items()), "a node is not running"
        status = _course("status", state=state)
        assert status.returncode == 0, status.stdout + status.stderr
        assert "cluster_state: ok" in status.stdout
        assert status.stdout.count(" primary ") == 3 and status.stdout.count("replica of") == 3
        again = _course("start", state=state)
        assert again.returncode != 0 and "already running" in again.stderr + again.stdout
    finally:
        stop = _course("stop", state=state)
    assert stop.returncode == 0, stop.stderr
    assert not state.exists()
    assert not Path(info["data_dir"]).exists()
    time.sleep(0.2)
    assert not [pid for port, pid in pids.items() if _is_our_server(pid, port)], "a node is still running"
    assert _course("status", state=state).returncode == 1


# ---------------------------------------------------------------- on a running cluster


@pytest.fixture(scope="module")
def cluster():
    if not cluster_available():
        pytest.skip("redis-server / redis-cli not installed")
    c = LocalCluster().start()
    yield c
    c.stop()
    assert not any(c.alive(p) for p in c.ports)


@pytest.fixture
def rc(cluster):
    import secrets

    client = cluster.client(prefix=f"course:test:{secrets.token_hex(4)}:")
    yield client
    client.cleanup()
    client.close()


def test_topology_three_primaries_three_replicas(cluster):
    rows = cluster.topology()
    primaries = [r for r in rows if r["role"] == "primary"]
    assert len(primaries) == 3 and len(rows) == 6
    assert sorted(r["primary"] for r in rows if r["role"] == "replica") == sorted(r["port"] for r in primaries)


def test_python_slot_equals_cluster_keyslot(rc):
    for key in ["views", "{user:17}:views", "a{b}{c}", "{}x", rc.key("hot", "home", 3), "ключ"]:
        assert rc.cluster_keyslot(key) == key_slot(key), key


def test_crossslot_is_refused_and_a_hash_tag_fixes_it(cluster, rc):
    a, b = rc.key("user:17:views"), rc.key("user:17:likes")
    assert not same_slot(a, b)
    node = cluster.node(cluster.owner_of(key_slot(a)))
    with pytest.raises(redis.exceptions.ResponseError, match="CROSSSLOT|don't hash to the same slot"):
        node.mget(a, b)
    with pytest.raises(redis.exceptions.ResponseError, match="don't hash to the same slot"):
        node.eval("return redis.call('INCR', KEYS[1]) + redis.call('INCR', KEYS[2])", 2, a, b)
    with pytest.raises(redis.exceptions.RedisClusterException, match="same key slot"):
        rc.mget(a, b)
    ta, tb = rc.key("{user:17}", "views"), rc.key("{user:17}", "likes")
    rc.incr(ta)
    rc.incrby(tb, 2)
    assert rc.mget(ta, tb) == ["1", "2"]
    assert rc.eval("return redis.call('INCR', KEYS[1]) + redis.call('INCR', KEYS[2])", 2, ta, tb) == 5


def test_mget_needs_one_slot_not_one_node(cluster, rc):
    days = [rc.key("views:post:17", f"2026-05-{d:02d}") for d in range(1, 29)]
    owner = {k: cluster.owner_of(key_slot(k)) for k in days}
    a, b = next(
        (a, b) for i, a in enumerate(days) for b in days[i + 1 :] if owner[a] == owner[b] and key_slot(a) != key_slot(b)
    )
    rc.incr(a)
    rc.incr(b)
    node = cluster.node(owner[a])  # this node holds both slots
    with pytest.raises(redis.exceptions.ResponseError, match="CROSSSLOT|don't hash to the same slot"):
        node.mget(a, b)  # redis-cli shows: (error) CROSSSLOT Keys in request ...
    assert node.mget(a) == ["1"] and node.mget(b) == ["1"]
    ta, tb = rc.key("views:{post:17}", "2026-05-01"), rc.key("views:{post:17}", "2026-05-02")
    assert key_slot(ta) == key_slot(tb)
    rc.incr(ta)
    assert cluster.node(cluster.owner_of(key_slot(ta))).mget(ta, tb) == ["1", None]


def test_wrong_node_answers_moved(cluster, rc):
    key = rc.key("views")
    rc.incr(key)
    owner = cluster.owner_of(key_slot(key))
    other = next(p for p in cluster.primary_ports() if p != owner)
    with pytest.raises(redis.exceptions.ResponseError, match=f"{key_slot(key)} 127.0.0.1:{owner}"):
        cluster.node(other).get(key)


def test_sharded_counter_sums_exactly_and_spreads_over_primaries(cluster, rc):
    sol = _solution()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: sol.incr_hot(rc, "home"), range(800)))
    assert sol.hot_total(rc, "home") == 800
    shards = rc.course_keys("hot:home:*")
    assert sum(int(rc.get(k)) for k in shards) == 800
    assert len({rc.node_of(k) for k in shards}) >= 2


def test_lab_solution_runs_on_the_cluster(rc):
    sol = _solution()
    assert [sol.user_incr(rc, 17, "views") for _ in range(2)] == [1, 2]
    assert sol.user_counters(rc, 17, ["views", "likes"]) == {"views": 2, "likes": 0}
    assert [
        sol.incr_once(rc, "orders", "r1"),
        sol.incr_once(rc, "orders", "r1"),
        sol.incr_once(rc, "orders", "r2", 4),
    ] == [1, 1, 5]


def test_lab_wrong_no_hash_tags_fails_on_the_cluster(rc):
    path = paths.LABS / "06-cluster" / "wrong" / "no_hash_tags.py"
    if not path.exists():  # the student edition has no known-wrong implementations
        pytest.skip("needs the instructor edition's labs/06-cluster/wrong/")
    from redis_course.labs.authoring.model import find_lab
    from redis_course.labs.authoring.wrong import Wrong

    wrong = types.ModuleType("lab06_wrong")  # wrong/ holds differences: compose them onto solution.py
    exec(compile(Wrong(find_lab("06"), path).source(), str(path), "exec"), wrong.__dict__)
    wrong.user_incr(rc, 17, "views")
    with pytest.raises(redis.exceptions.RedisClusterException):
        wrong.user_counters(rc, 17, ["views", "likes"])


def test_limiters_of_lesson_04_decide_the_same_on_the_cluster(rc):
    from redis_course import connect
    from redis_course.lessons import ratelimit

    single = connect("", prefix=rc.prefix)
    trace = ratelimit.bursty_trace()[:40]
    for limiter in ratelimit.LIMITERS.values():
        one = [d.allowed for d in ratelimit.replay(single, limiter, trace, "ip")]
        many = [d.allowed for d in ratelimit.replay(rc, limiter, trace, "ip")]
        assert one == many
    single.cleanup()


# the failover test kills a node: it runs last in this module (pytest keeps the file's order)
def test_failover_loses_acknowledged_writes_of_a_cut_off_replica(cluster, rc):
    counter = rc.key("payments")
    old = cluster.owner_of(key_slot(counter))
    replica = cluster.replica_of(old)
    for _ in range(100):
        rc.incr(counter)
    cluster.pause(replica)
    cluster.node(old).client_kill_filter(_type="replica")
    for _ in range(50):
        rc.incr(counter)
    cluster.kill(old)
    cluster.resume(replica)
    new = cluster.wait_failover(old)
    assert new == replica
    assert int(cluster.node(new).get(counter)) == 100  # the 50 acknowledged after the cut are gone
    assert rc.incr(counter) == 101  # the client found the new primary


# ---------------------------------------------------------------- the grader's one-node cluster


@needs_cluster
def test_lab_redis_cluster_mode_refuses_crossslot():
    import shutil

    from redis_course.labs.authoring.model import find_lab
    from redis_course.labs.sandbox.server import RunRedis
    from redis_course.labs.sandbox import make_run_dir

    tmp_path = make_run_dir("course-test-")  # a server run as nobody (when root) can enter it

    assert find_lab("06").redis_mode == "cluster"
    assert find_lab("01").redis_mode == "single"
    box = RunRedis(tmp_path / "redis", "redis-server", cluster=True).start()
    try:
        c = box.client(prefix="course:t:")
        assert c.cluster("info")["cluster_state"] == "ok"
        c.set(c.key("a"), 1)
        assert c.mget(c.key("{u}", "a"), c.key("{u}", "b")) == [None, None]
        with pytest.raises(redis.exceptions.ResponseError, match="don't hash to the same slot"):
            c.mget(c.key("a"), c.key("b"))
        box.reset()
        assert box.client(prefix="").dbsize() == 0
    finally:
        box.close()
    plain = RunRedis(tmp_path / "plain", "redis-server").start()
    try:
        c = plain.client(prefix="course:t:")
        assert c.mget(c.key("a"), c.key("b")) == [None, None]
    finally:
        plain.close()
        shutil.rmtree(tmp_path, ignore_errors=True)
