"""Every private API of redis-py and fakeredis the course uses is fenced in compat.py, and each use is
checked here: still present (one sentence naming the upgrade when not), and still doing its job."""

from __future__ import annotations

import re
import tempfile
import threading
from pathlib import Path

import fakeredis
import pytest
import redis

from foundation.shared import REAL_URL, require_real_redis
from redis_course.core import compat
from redis_course import paths


@pytest.mark.parametrize("use", sorted(compat.USES))
def test_every_private_name_is_still_there(use):
    compat.USES[use]()


def test_no_private_import_outside_compat():
    private = re.compile(r"\b(?:redis|fakeredis)\._[a-z]|(?<!\w)_command_packer|_RESP2Parser|TCPFakeRequestHandler")
    found = []
    for path in sorted((paths.ROOT / "src").rglob("*.py")) + sorted((paths.ROOT / "labs").rglob("*.py")):
        if path.name == "compat.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            if private.search(code) and not code.lstrip().startswith(("``", '"', "*")):
                found.append(f"{path.relative_to(paths.ROOT)}:{n}: {line.strip()}")
    assert not found, "private redis-py/fakeredis names outside compat.py:\n" + "\n".join(found)


# ------------------------------------------------------------------ an upgrade that changes one fails loudly


@pytest.mark.parametrize(
    "module, owner, name, use",
    [
        ("redis._parsers", "_RESP2Parser", "_read_response", "redis-py RESP2 parser"),
        ("fakeredis._socket", "FakeSocket", "_decode_result", "fakeredis raw replies"),
        ("fakeredis._clients", "_tcp_server", "TCPFakeRequestHandler", "fakeredis request handler"),
    ],
)
def test_a_changed_private_api_fails_with_one_sentence(monkeypatch, module, owner, name, use):
    import importlib

    obj = getattr(importlib.import_module(module), owner)
    where = next((c for c in getattr(obj, "__mro__", [obj]) if name in vars(c)), obj)
    monkeypatch.delattr(where, name)  # what an upgrade that renames it looks like
    with pytest.raises(compat.PrivateAPIChanged) as err:
        compat.USES[use]()
    text = str(err.value)
    package = module.split(".")[0]
    assert (
        text.startswith(f"{package} ")
        and f"{owner}.{name}" in text
        and "update src/redis_course/core/compat.py" in text
    )
    assert text.count(". ") == 0 and "\n" not in text  # one sentence


def test_a_changed_command_packer_fails_with_one_sentence(monkeypatch):
    monkeypatch.setattr(redis.Connection, "_construct_command_packer", lambda self, packer: None)
    with pytest.raises(compat.PrivateAPIChanged, match=r"^redis \S+ no longer packs commands through "):
        compat.check_command_packer()


# ------------------------------------------------------------------ each use still does its job


def test_raw_fakeredis_replies_keep_status_bulk_and_error_text():
    server = fakeredis.FakeServer(version=compat.FAKE_SERVER_VERSION)
    r = fakeredis.FakeRedis(
        server=server,
        protocol=2,
        decode_responses=True,
        connection_class=compat.raw_fake_connection_class(),
        single_connection_client=True,
    )
    r.response_callbacks = {}
    assert type(r.execute_command("SET", "k", "OK")) is compat.Status
    got = r.execute_command("GET", "k")
    assert got == "OK" and type(got) is str
    with pytest.raises(compat.ReplyError) as err:
        r.execute_command("INCR", "k")
    assert err.value.text == "ERR value is not an integer or out of range"


def test_raw_parser_reads_a_real_server():
    require_real_redis()
    url = redis.connection.parse_url(REAL_URL)
    pool = redis.ConnectionPool(
        host=url.get("host", "127.0.0.1"),
        port=url.get("port", 6379),
        protocol=2,
        parser_class=compat.raw_parser_class(),
        decode_responses=True,
        socket_timeout=5,
    )
    r = redis.Redis(connection_pool=pool, single_connection_client=True)
    r.response_callbacks = {}
    pong = r.execute_command("PING")
    assert type(pong) is compat.Status and pong == "PONG"
    with pytest.raises(compat.ReplyError) as err:
        r.execute_command("NOSUCHCOMMAND-course")
    assert err.value.text.startswith("ERR unknown command")
    assert r.execute_command("ECHO", "OK") == "OK" and type(r.execute_command("ECHO", "x")) is str


def test_the_guard_still_sees_every_command_through_the_packer():
    from redis_course.core.backend import GuardedConnection, ServerWideCommandRefused

    conn = GuardedConnection(host="127.0.0.1", port=1)  # never connected: packing is enough
    with pytest.raises(ServerWideCommandRefused):
        conn._command_packer.pack("FLUSHALL")
    with pytest.raises(ServerWideCommandRefused):
        list(conn.pack_commands([("SET", "a", "1"), ("CONFIG", "SET", "save", "")]))


def test_unix_fake_server_answers_on_its_socket():
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "redis.sock")
        server = compat.unix_fake_server(path)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        try:
            r = redis.Redis(unix_socket_path=path, socket_timeout=5, decode_responses=True)
            assert r.ping() and r.incr("n") == 1 and r.incr("n") == 2
        finally:
            server.shutdown()
            server.server_close()


def test_the_fake_server_version_is_stated_once():
    from redis_course.core import backend

    assert backend.FAKE_SERVER_VERSION is compat.FAKE_SERVER_VERSION
    pattern = re.compile(r"version\s*=\s*\(\s*\d+\s*,")
    elsewhere = [
        p
        for p in (paths.ROOT / "src").rglob("*.py")
        if p.name != "compat.py" and pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert not elsewhere, elsewhere
