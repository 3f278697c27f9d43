"""Private redis-server processes: start, stop, kill, restart, and nothing left behind."""

from __future__ import annotations

import os

import pytest

from redis_course import CourseError
from redis_course.l10n.messages import msg
from redis_course.core.servers import PrivateRedis, RedisServerMissing, private_redis, redis_server_binary

needs_binary = pytest.mark.usefixtures("_need_binary")


@pytest.fixture
def _need_binary():
    if not redis_server_binary():
        if os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1":
            pytest.fail("redis-server is required (COURSE_REQUIRE_REAL_REDIS=1)")
        pytest.skip("redis-server is not installed")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); read its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.real_redis
@needs_binary
def test_start_stop_and_nothing_left_running():
    with private_redis() as srv:
        pid, data_dir = srv.proc.pid, srv.data_dir
        r = srv.client()
        assert r.owned and r.incr(r.key("n")) == 1
        assert _alive(pid) and data_dir.exists()
    assert srv.proc.poll() is not None and not _alive(pid)
    assert not data_dir.exists()
    with pytest.raises(CourseError):
        srv.client(socket_connect_timeout=1)


@pytest.mark.real_redis
@needs_binary
def test_stop_then_start_again_on_the_same_port():
    with private_redis() as srv:
        port = srv.port
        srv.stop()
        assert srv.proc.poll() is not None
        srv.start()
        assert srv.port == port and srv.client().ping()


@pytest.mark.real_redis
@needs_binary
def test_unix_socket():
    with private_redis(unix_socket=True) as srv:
        assert srv.url.startswith("unix://") and srv.client().ping()
        assert srv.socket_path.exists()


@pytest.mark.real_redis
@needs_binary
def test_kill_and_restart_keeps_data_with_aof_always():
    with private_redis(persistence="aof-always") as srv:
        r = srv.client(prefix="course:test:")
        for _ in range(5):
            r.incr(r.key("n"))
        r.rpush(r.key("l"), "a", "b")
        pid = srv.proc.pid
        srv.kill()  # SIGKILL: no shutdown, no final save
        assert not _alive(pid)
        srv.start()
        r = srv.client(prefix="course:test:")
        assert r.get(r.key("n")) == "5" and r.lrange(r.key("l"), 0, -1) == ["a", "b"]


@pytest.mark.real_redis
@needs_binary
def test_kill_without_persistence_loses_data():
    """The contrast that makes the previous test meaningful: with persistence none, a restart is empty."""
    with private_redis(persistence="none") as srv:
        r = srv.client(prefix="course:test:")
        r.set(r.key("n"), 5)
        srv.kill()
        srv.start()
        assert srv.client(prefix="course:test:").get(r.key("n")) is None


def test_unknown_persistence_is_refused():
    with pytest.raises(ValueError):
        PrivateRedis(persistence="sometimes")


@pytest.mark.parametrize("lang", ["en", "ru", "zh"])
def test_missing_binary(monkeypatch, lang):
    monkeypatch.setenv("COURSE_REDIS_SERVER", "/nonexistent/redis-server")
    monkeypatch.setenv("COURSE_LANG", lang)
    with pytest.raises((RedisServerMissing, CourseError)) as info:
        with private_redis():
            pass
    assert isinstance(info.value, RedisServerMissing), repr(info.value)
    assert str(info.value) == msg("no_redis_server", lang=lang)
    assert "\n" not in str(info.value)
