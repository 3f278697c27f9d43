"""Finding: the student's private redis-server could reach past itself.

Student code talks to its own redis-server; on that server it could MIGRATE a key to the shared
Redis at 127.0.0.1:6379 (the server had the machine's network), REPLICAOF any server, CONFIG SET
maxmemory (or, on Redis 6, ``dir`` + SAVE to write files, MODULE LOAD, DEBUG).  Now the server has a
network namespace of its own (root or bubblewrap), student code connects as an ACL user without
those commands, the grader as another user, and maxmemory is the grader's.

The server is started as Redis 6 would be (``COURSE_REDIS_SERVER_ARGS``: protected configs, DEBUG
and MODULE enabled), so the ACL is what stops them, not Redis 7's defaults.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from redis_course.labs.authoring.model import find_lab
from redis_course.labs.engine.runner import run_lab
from redis_course.labs.sandbox import launch as isolation
from redis_course.labs.sandbox import make_run_dir
from redis_course.labs.sandbox.box import Box
from redis_course.labs.sandbox.limits import Limits
from redis_course.core.servers import redis_server_binary

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not redis_server_binary(), reason="needs redis-server")]

REDIS6 = "--enable-protected-configs yes --enable-debug-command yes --enable-module-command yes"
ATTACK = Path(__file__).parent / "lab00" / "escape_via_server.py"
KEY = "course:redteam:migrated"
ADMIN = [
    ("MIGRATE", "127.0.0.1", "6379", "", "0", "1000", "KEYS", "x"),
    ("REPLICAOF", "127.0.0.1", "1"),
    ("SLAVEOF", "NO", "ONE"),
    ("CONFIG", "SET", "maxmemory", "0"),
    ("CONFIG", "SET", "dir", "/tmp"),
    ("CONFIG", "GET", "dir"),
    ("MONITOR",),
    ("CLIENT", "KILL", "ID", "999999"),
    ("CLIENT", "PAUSE", "1"),
    ("DEBUG", "SLEEP", "0"),
    ("MODULE", "LOAD", "/nonexistent.so"),
    ("SHUTDOWN", "ABORT"),
    ("SAVE",),
    ("BGSAVE",),
    ("BGREWRITEAOF",),
    ("ACL", "SETUSER", "x"),
    ("ACL", "LIST"),
    ("FAILOVER", "ABORT"),
    ("SYNC",),
    ("PSYNC", "?", "-1"),
    ("CLUSTER", "RESET"),
    ("CLUSTER", "MEET", "127.0.0.1", "1"),
    ("SCRIPT", "KILL"),
    ("FUNCTION", "FLUSH"),
    ("FUNCTION", "KILL"),
    ("FLUSHALL",),
    ("SWAPDB", "0", "1"),
    ("RESTORE", "k", "0", "x"),
]


@pytest.fixture
def redis6(monkeypatch):
    monkeypatch.setenv("COURSE_REDIS_SERVER_ARGS", REDIS6)


@pytest.fixture
def shared():
    """The shared server at 127.0.0.1:6379 (only this test's key is read or deleted there)."""
    from redis_course import CourseError, connect

    try:
        c = connect("redis://127.0.0.1:6379/0", prefix="course:redteam:", socket_timeout=2)
    except CourseError:
        pytest.skip("no Redis at 127.0.0.1:6379 to check")
    c.delete(KEY)
    yield c
    c.delete(KEY)


@pytest.fixture
def server(redis6):
    """A grading run's box with redis-server; its server, as the grader and the student reach it."""
    run_dir = make_run_dir("course-redteam-")
    box = Box(b"", run_dir, "course:redteam:", backend="redis-server").start()
    yield box.redis
    box.stop()
    shutil.rmtree(run_dir, ignore_errors=True)


def test_student_user_is_refused_every_command_that_reaches_past_its_data(server):
    import redis

    from redis_course.core.backend import connect

    student = connect(server.url, prefix="course:t:")
    assert student.incr("n") == 1 and student.eval("return redis.call('incr', KEYS[1])", 1, "n") == 2
    kw = student.connection_pool.connection_kwargs
    for cmd in ADMIN:  # a plain client: the course's own guard is not what is tested here
        raw = redis.Redis(
            unix_socket_path=kw["path"], username=kw["username"], password=kw["password"], socket_timeout=5
        )
        with pytest.raises(redis.exceptions.NoPermissionError):
            raw.execute_command(*cmd)
        raw.close()
    raw = redis.Redis(unix_socket_path=kw["path"], username=kw["username"], password=kw["password"])
    with pytest.raises(redis.exceptions.ResponseError, match="permissions|can't run this command"):
        raw.eval("return redis.call('migrate', '127.0.0.1', '6379', '', '0', '1000', 'KEYS', KEYS[1])", 1, "x")
    grader = server.client("")
    assert grader.config_get("maxmemory")["maxmemory"] == str(256 << 20)
    assert grader.flushall()


def test_private_server_has_no_network(server, shared):
    """Even the grader's own user cannot make the server connect anywhere: no network inside."""
    import redis

    if isolation.mode() != "bwrap":
        pytest.skip("needs bubblewrap for a network namespace (the ACL users still hold)")

    grader = server.client("")
    grader.set(KEY, "from the private server")
    with pytest.raises(redis.exceptions.ResponseError, match="IOERR|Connection|unreachable|refused"):
        grader.execute_command("MIGRATE", "127.0.0.1", "6379", "", "0", "1000", "COPY", "KEYS", KEY)
    assert shared.exists(KEY) == 0


def test_attack_through_the_private_server_is_contained(redis6, shared):
    for leftover in Path("/tmp").glob("redteam-escape.rdb"):
        leftover.unlink()
    lab = find_lab("00")
    res = run_lab(
        lab, ATTACK, visibility=("public", "hidden"), backend="redis-server", limits=Limits(call_timeout_s=10)
    )
    accepted = [line for line in res.output.splitlines() if line.startswith("ACCEPTED")]
    assert shared.exists(KEY) == 0, "MIGRATE wrote to the shared Redis"
    assert not Path("/tmp/redteam-escape.rdb").exists(), "CONFIG SET dir + SAVE wrote a file"
    assert not accepted, accepted
    assert res.points == 0 and res.status == "ok", (res.status, res.message)
