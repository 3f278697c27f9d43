"""connect(), the key namespace, the clear errors, and the guard against server-wide commands."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from foundation.shared import REAL_URL, require_real_redis
from redis_course import CourseError, ServerWideCommandRefused, connect
from redis_course.core.backend import CONNECT_TIMEOUT, check_command
from redis_course.core.servers import free_port, private_redis, redis_server_binary

COURSE = Path(sys.executable).with_name("course")
REQUIRE_REAL = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"


def _prefix() -> str:
    return f"course:test:{secrets.token_hex(4)}:"


def _need_redis_server() -> None:
    if not redis_server_binary():
        if REQUIRE_REAL:
            pytest.fail("redis-server is required (COURSE_REQUIRE_REAL_REDIS=1)")
        pytest.skip("redis-server is not installed")


def _one_line_error(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text, text
    return text


# ------------------------------------------------------------------ connect()


def test_connect_fakeredis_by_default(monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    r = connect(prefix="course:test:fake:")
    assert r.is_fake and r.backend == "fakeredis" and r.owned
    assert r.incr(r.key("n")) == 1 and r.get(r.key("n")) == "1"  # RESP2, decoded
    assert "fakeredis" in r.describe() and "course:test:fake:" in r.describe()
    r.cleanup()


def test_connect_empty_url_forces_fakeredis(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # would fail if used
    assert connect("", prefix=_prefix()).is_fake


def test_run_prefix_is_shared_through_the_environment(monkeypatch):
    monkeypatch.delenv("COURSE_KEY_PREFIX", raising=False)
    a = connect("")
    assert a.prefix.startswith("course:") and a.prefix.endswith(":")
    assert os.environ["COURSE_KEY_PREFIX"] == a.prefix
    assert connect("").prefix == a.prefix


def _where(url: str) -> str:
    """host:port of the real server the tests use (COURSE_TEST_REDIS_URL may name another than 6379)."""
    from urllib.parse import urlparse

    p = urlparse(url)
    return f"{p.hostname}:{p.port or 6379}"


@pytest.mark.real_redis
def test_connect_real_server():
    url = require_real_redis()
    r = connect(url, prefix=_prefix())
    assert not r.is_fake and r.backend == "redis" and not r.owned
    assert r.ping() is True
    assert r.server_version().startswith("7.")
    assert r.describe().startswith("backend: Redis 7.") and _where(url) in r.describe()


# ------------------------------------------------------------------ clear errors


def test_malformed_url():
    with pytest.raises(CourseError) as info:
        connect("redis://127.0.0.1:notaport/0")
    assert "is not a Redis URL" in _one_line_error(info.value)


def test_unknown_scheme():
    for url in ("http://127.0.0.1:6379", "127.0.0.1:6379"):
        with pytest.raises(CourseError) as info:
            connect(url)
        assert "is not a Redis URL" in _one_line_error(info.value)


def test_connection_refused():
    with pytest.raises(CourseError) as info:
        connect(f"redis://127.0.0.1:{free_port()}/0")
    text = _one_line_error(info.value)
    assert text.startswith("Cannot connect to Redis at 127.0.0.1:") and "refused" in text


def test_connection_refused_message_is_localized(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "ru")
    with pytest.raises(CourseError) as info:
        connect(f"redis://127.0.0.1:{free_port()}/0")
    assert _one_line_error(info.value).startswith("Не удаётся подключиться к Redis")


def test_silent_server_fails_within_the_connect_timeout():
    """A server that accepts the TCP connection but never answers (like a blackhole) must not hang."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes handshakes; nobody ever reads or answers
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        outcome: list[BaseException] = []

        def attempt():
            try:
                connect(url)  # default timeouts: the first PING must give up after CONNECT_TIMEOUT
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                outcome.append(exc)

        t = threading.Thread(target=attempt, daemon=True)
        t.start()
        t.join(CONNECT_TIMEOUT * 3)  # a hang guard, not a speed claim
        assert not t.is_alive(), "connect() hung on a server that never answers"
    assert len(outcome) == 1 and isinstance(outcome[0], CourseError), outcome
    assert f"did not answer within {CONNECT_TIMEOUT:g} s" in _one_line_error(outcome[0])


@pytest.mark.real_redis
def test_wrong_password_on_a_private_server():
    _need_redis_server()
    with private_redis(extra_args=["--requirepass", "right-one"]) as srv:
        assert srv.client(prefix="").ping()  # the right password is in srv.url
        for url in (f"redis://:wrong@127.0.0.1:{srv.port}/0", f"redis://127.0.0.1:{srv.port}/0"):
            with pytest.raises(CourseError) as info:
                connect(url, prefix=_prefix())
            text = _one_line_error(info.value)
            assert "refused the credentials" in text and ".." not in text


# ------------------------------------------------------------------ the guard

DANGEROUS = [
    ("FLUSHALL",),
    ("FLUSHDB",),
    ("CONFIG", "SET", "maxmemory", "1mb"),
    ("SHUTDOWN", "NOSAVE"),
    ("DEBUG", "SLEEP", "0"),
    ("SAVE",),
    ("BGSAVE",),
]
DANGEROUS_LUA = [
    "redis.call('FLUSHALL')",
    'return redis.pcall("flushdb")',
    "redis.call('config', 'set', 'maxmemory', '1mb')",
    "redis.call( 'DEBUG', 'SLEEP', 0)",
    "redis.call('save')",
    "redis.call('bgsave')",
]
STAT_NAMES = ["flushall", "flushdb", "config|set", "shutdown", "debug", "save", "bgsave", "eval"]


def _stats(admin) -> dict[str, int]:
    info = admin.info("commandstats")
    return {n: int(info.get(f"cmdstat_{n}", {}).get("calls", 0)) for n in STAT_NAMES}


def _every_way(r) -> list[str]:
    """Send each dangerous command directly, in a pipeline, in MULTI/EXEC and in a script; all must be refused."""
    refused = []
    for cmd in DANGEROUS:
        for how, call in [
            ("direct", lambda: r.execute_command(*cmd)),
            ("pipeline", lambda: r.pipeline(transaction=False).incr(r.key("n")).execute_command(*cmd).execute()),
            ("multi", lambda: r.pipeline(transaction=True).incr(r.key("n")).execute_command(*cmd).execute()),
        ]:
            with pytest.raises(ServerWideCommandRefused) as info:
                call()
            assert cmd[0] in str(info.value) and "did not start" in str(info.value)
            refused.append(f"{how} {cmd[0]}")
    for script in DANGEROUS_LUA:
        for call in (lambda: r.eval(script, 0), lambda: r.register_script(script)(keys=[], args=[])):
            with pytest.raises(ServerWideCommandRefused):
                call()
        refused.append(f"eval {script}")
    return refused


def test_check_command_is_case_insensitive_and_two_words():
    for args in [
        ("flushall",),
        (b"FlushDB",),
        ("config", "set", "x", "y"),
        ("CONFIG SET", "x", "y"),
        ("EVAL", "redis.call('FLUSHALL')", 0),
    ]:
        with pytest.raises(ServerWideCommandRefused):
            check_command(args, "here")
    for args in [("CONFIG", "GET", "maxmemory"), ("GET", "flushall"), ("EVAL", "return redis.call('GET', KEYS[1])", 1)]:
        check_command(args, "here")  # allowed


@pytest.mark.real_redis
def test_guard_on_a_private_server_the_client_does_not_own():
    """The same guard, where a failure would do no harm: a private server reached without owned=True."""
    _need_redis_server()
    with private_redis() as srv:
        admin = srv.client(prefix="")
        admin.set("sentinel", "still here")
        before = _stats(admin)
        r = connect(srv.url, prefix=_prefix())
        assert len(_every_way(r)) == 3 * len(DANGEROUS) + len(DANGEROUS_LUA)
        assert admin.get("sentinel") == "still here"
        after = _stats(admin)
        assert {k: after[k] - before[k] for k in STAT_NAMES} == dict.fromkeys(STAT_NAMES, 0)
        assert admin.config_get("maxmemory")["maxmemory"] == "0"


@pytest.mark.real_redis
def test_guard_on_the_real_server():
    url = require_real_redis()
    r = connect(url, prefix=_prefix())
    admin = connect(url, prefix=r.prefix)  # INFO, GET and SET are not server-wide
    sentinel = r.key("sentinel")
    r.set(sentinel, "still here", ex=600)
    before = _stats(admin)
    try:
        _every_way(r)
        assert r.get(sentinel) == "still here"
        # nothing reached the server: not even the pipelines' INCR (the whole batch is refused before sending)
        assert r.get(r.key("n")) is None
        after = _stats(admin)
        assert {k: after[k] - before[k] for k in STAT_NAMES} == dict.fromkeys(STAT_NAMES, 0)
    finally:
        r.cleanup()


@pytest.mark.real_redis
def test_server_wide_commands_allowed_on_an_owned_private_server():
    _need_redis_server()
    with private_redis() as srv:
        r = srv.client(prefix="")
        assert r.owned
        r.set("a", 1)
        assert r.flushdb() and r.dbsize() == 0
        r.set("a", 1)
        assert r.flushall() and r.dbsize() == 0
        assert r.config_set("maxmemory", "10mb") and r.config_get("maxmemory")["maxmemory"] == "10485760"
        assert r.execute_command("DEBUG", "SLEEP", "0") in ("OK", b"OK", True)
        assert r.save()
        assert r.pipeline(transaction=True).set("b", 1).flushall().execute() == [True, True]
        assert r.eval("return redis.call('FLUSHALL')", 0) == "OK"
        r.shutdown(nosave=True)  # redis-py returns when the server closes the connection
        assert srv.proc.wait(10) == 0  # SHUTDOWN did reach it: the server is gone


# ------------------------------------------------------------------ the key namespace


def test_key_and_unprefixed():
    r = connect("", prefix="course:abc123:")
    assert r.key("views") == "course:abc123:views"
    assert r.key("user", 42, "visits") == "course:abc123:user:42:visits"
    assert r.unprefixed("course:abc123:views") == "views"
    assert r.unprefixed("other:views") == "other:views"


def test_course_keys_and_cleanup_only_touch_the_prefix(backend_url):
    base = _prefix()
    mine = connect(backend_url or "", prefix=base + "a:")
    other = connect(backend_url or "", prefix=base + "ab:")  # shares the text "…a" but not the prefix
    try:
        for i in range(1205):  # more than one SCAN page and more than one UNLINK batch
            mine.set(mine.key("k", i), i)
        mine.hset(mine.key("h"), "f", 1)
        other.set(other.key("keep"), 1)
        other.set(base + "a", "no colon: not under the prefix")
        assert mine.course_keys("h") == [mine.key("h")]
        assert len(mine.course_keys()) == 1206
        assert mine.course_keys("k:1*")[:2] == [mine.key("k", 1), mine.key("k", 10)]
        assert mine.cleanup() == 1206
        assert mine.course_keys() == []
        assert other.get(other.key("keep")) == "1" and other.get(base + "a") is not None
        assert mine.cleanup() == 0
    finally:
        mine.cleanup()
        other.cleanup()
        other.delete(base + "a")


# ------------------------------------------------------------------ errors in Jupyter

_CHILD = """
import os, sys
from redis_course import connect
r = connect(sys.argv[1])
r.set(r.key("from-" + sys.argv[2]), "1")
print(r.prefix)
"""


def _run_child(env: dict, tag: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, REAL_URL, tag], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_process_deletes_the_keys_of_the_prefix_it_made_up_when_it_exits():
    require_real_redis()
    env = {k: v for k, v in os.environ.items() if k != "COURSE_KEY_PREFIX"}
    prefix = _run_child(env, "own")
    assert prefix.startswith("course:")
    assert connect(REAL_URL, prefix=prefix).course_keys() == []


def test_a_child_that_inherits_the_prefix_leaves_the_parents_keys_alone():
    """Worker processes share the run's keys; one that exits must not delete them for everybody."""
    require_real_redis()
    prefix = _prefix()
    parent = connect(REAL_URL, prefix=prefix)
    parent.set(parent.key("parent"), "1")
    try:
        assert _run_child(dict(os.environ, COURSE_KEY_PREFIX=prefix), "child") == prefix
        assert parent.course_keys() == [parent.key("from-child"), parent.key("parent")]
    finally:
        parent.cleanup()


def test_course_error_renders_without_traceback():
    exc = CourseError("Cannot connect to Redis at 127.0.0.1:1: Connection refused.")
    lines = exc._render_traceback_()
    assert lines == ["\x1b[31mCannot connect to Redis at 127.0.0.1:1: Connection refused.\x1b[0m"]


def test_course_error_in_ipython_shows_one_line(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        result = shell.run_cell(f"from redis_course import connect\nconnect('redis://127.0.0.1:{free_port()}/0')")
    finally:
        InteractiveShell.clear_instance()
    assert isinstance(result.error_in_exec, CourseError)
    out = capsys.readouterr()
    shown = (out.out + out.err).strip()
    assert "Cannot connect to Redis" in shown and "Traceback" not in shown and shown.count("\n") == 0, shown


# ------------------------------------------------------------------ course doctor


def _doctor(redis_url: str | None):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["COURSE_LANG"] = "en"
    if redis_url is not None:
        env["REDIS_URL"] = redis_url
    proc = subprocess.run([str(COURSE), "doctor"], env=env, capture_output=True, text=True, timeout=120)
    redis_lines = [ln for ln in proc.stdout.splitlines() if "REDIS_URL" in ln]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert len(redis_lines) == 1, proc.stdout
    return proc.returncode, redis_lines[0], proc.stdout


def test_doctor_without_redis_url():
    code, line, out = _doctor(None)
    assert "not set" in line and line.lstrip().startswith("[--]")
    assert "[ok] fakeredis" in out
    assert code == (1 if "[!!]" in out else 0)


@pytest.mark.real_redis
def test_doctor_with_the_real_server():
    url = require_real_redis()
    code, line, out = _doctor(url)
    assert line.lstrip().startswith("[ok]") and f"{_where(url)}: Redis 7." in line
    assert code == (1 if "[!!]" in out else 0)


def test_doctor_with_a_dead_port():
    code, line, out = _doctor(f"redis://127.0.0.1:{free_port()}/0")
    assert code == 1
    assert line.lstrip().startswith("[!!]") and "Cannot connect to Redis at 127.0.0.1:" in line
    assert "1 problem above: fix it" in out
