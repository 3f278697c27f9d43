"""The fault proxy between a student's client and the run's private Redis, on both backends the grader
uses: a private redis-server and the fakeredis server process, each on a Unix socket.

Crashes are checked by what the server holds afterwards (read on a direct connection, once the proxy
says every forwarded command has reached it: ``wait_drained``), never by the proxy's own counters."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import threading
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from redis_course.labs.sandbox.server import RunRedis
from redis_course.labs.sandbox import make_run_dir
from redis_course.labs.sandbox.faultproxy import READ_CHUNK, FaultProxy
from redis_course.core.servers import PrivateRedis, redis_server_binary

PREFIX = "fp:"  # keys under it count toward the crash budget
OTHER = "other:"  # keys that do not


class Upstream:
    def __init__(self, kind: str, path: str, run) -> None:
        self.kind, self.path, self.run = kind, path, run


@pytest.fixture(scope="module", params=["redis-server", "fakeredis"])
def upstream(request):
    run = make_run_dir("course-faultproxy-")
    if request.param == "redis-server":
        if not redis_server_binary():
            shutil.rmtree(run, ignore_errors=True)
            pytest.skip("redis-server is not installed")
        # a client that never reads must not make the test server itself grow without end
        srv = PrivateRedis(
            unix_socket=True,
            data_dir=run / "redis",
            extra_args=["--client-output-buffer-limit", "normal", "32mb", "16mb", "5"],
        ).start()
        path, stop = str(srv.socket_path), srv.kill
    else:
        box = RunRedis(run / "redis", "fakeredis").start()  # the grader's own way to start it
        path, stop = str(box.socket_path), box.stop
    try:
        yield Upstream(request.param, path, run)
    finally:
        stop()
        shutil.rmtree(run, ignore_errors=True)


def client(path: str, protocol: int = 3, **kw) -> redis.Redis:
    return redis.Redis(
        unix_socket_path=path,
        protocol=protocol,
        retry=Retry(NoBackoff(), 0),
        socket_timeout=kw.pop("socket_timeout", 5),
        **kw,
    )


@pytest.fixture
def direct(upstream):
    c = client(upstream.path)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def make_proxy(upstream, direct):
    made = []

    def make(**kw) -> FaultProxy:
        path = str(upstream.run / f"proxy-{secrets.token_hex(4)}.sock")
        p = FaultProxy(path, upstream.path, PREFIX, **kw).start()
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


@pytest.fixture
def proxy(make_proxy):
    return make_proxy()


def k(name: str) -> str:
    return PREFIX + name


def eventually(fn, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.01)


# ------------------------------------------------------------------ raw bytes through, unchanged


def pack(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def exchange(sock: socket.socket, payload: bytes) -> bytes:
    """Send payload and an ECHO of a fresh token; the bytes that came back before the token's reply."""
    token = secrets.token_hex(8).encode()
    ends = (b"$%d\r\n%s\r\n" % (len(token), token), b"+%s\r\n" % token)  # fakeredis: a simple string
    sock.sendall(payload + pack("ECHO", token))
    data = b""
    while not data.endswith(ends):
        chunk = sock.recv(1 << 16)
        assert chunk, "the connection closed"
        data += chunk
    end = next(e for e in ends if data.endswith(e))
    return data[: -len(end)]


def session(path: str, protocol: int, ns: str) -> bytes:
    binary = b"\x00\r\n\xff*$" * 5000
    commands = [
        ("SET", ns + "a", "10"),
        ("INCR", ns + "a"),
        ("INCRBYFLOAT", ns + "a", "1.5"),
        ("GET", ns + "a"),
        ("GET", ns + "missing"),
        ("HSET", ns + "h", "f", "1", "g", "2"),
        ("HGETALL", ns + "h"),
        ("ZADD", ns + "z", "1", "x", "2.5", "y"),
        ("ZRANGE", ns + "z", "0", "-1", "WITHSCORES"),
        ("RPUSH", ns + "l", "a", "b"),
        ("LRANGE", ns + "l", "0", "-1"),
        ("SADD", ns + "s", "m"),
        ("SMEMBERS", ns + "s"),
        ("INCR", ns + "h"),
        ("EXISTS", ns + "a", ns + "missing"),
        ("SET", ns + "bin", binary),
        ("GET", ns + "bin"),
        ("MULTI",),
        ("INCRBY", ns + "n", "5"),
        ("GET", ns + "n"),
        ("EXEC",),
        ("PEXPIRE", ns + "n", "100000"),
        ("DEL", ns + "a", ns + "h"),
    ]
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(path)
        exchange(s, pack("HELLO", protocol))  # its reply names the connection's id: not compared
        block = commands.index(("MULTI",))  # an ECHO inside MULTI would only be queued
        steps = [pack(*c) for c in commands[:block]] + [b"".join(pack(*c) for c in commands[block : block + 4])]
        steps += [pack(*c) for c in commands[block + 4 :]]
        one_by_one = b"".join(exchange(s, step) for step in steps)
        pipelined = exchange(s, b"".join(pack(*c) for c in commands))
    return one_by_one, pipelined


@pytest.mark.parametrize("protocol", [2, 3])
def test_plain_commands_and_a_pipeline_come_back_byte_for_byte(upstream, direct, proxy, protocol):
    d1, d2 = session(upstream.path, protocol, k("direct:"))
    direct.flushall()
    p1, p2 = session(proxy.listen_path, protocol, k("direct:"))
    assert p1 == d1 and p2 == d2
    assert b"WRONGTYPE" in p1 and b"\x00\r\n\xff*$" in p1  # an error and binary data among them
    assert proxy.stats()["commands"] >= 2 * 23


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_pipelines_give_what_a_direct_connection_gives(upstream, direct, proxy, protocol):
    def run(path):
        c = client(path, protocol)
        results = []
        for transaction in (False, True):
            pipe = c.pipeline(transaction=transaction)
            pipe.set(k("x"), 1).incr(k("x")).hset(k("h"), mapping={"a": 1}).hgetall(k("h"))
            pipe.zadd(k("z"), {"m": 1.5}).zrange(k("z"), 0, -1, withscores=True).get(k("none"))
            results.append(pipe.execute())
            c.delete(k("x"), k("h"), k("z"))
        c.close()
        return results

    assert run(proxy.listen_path) == run(upstream.path)


# ------------------------------------------------------------------ crashes


def crash_pipeline(path: str, n_incr: int):
    """(SET other:i, INCR fp:c) pairs in one non-transactional pipeline: only the INCRs count."""
    c = client(path)
    pipe = c.pipeline(transaction=False)
    for i in range(n_incr):
        pipe.set(OTHER + str(i), 1)
        pipe.incr(k("c"))
    try:
        return pipe.execute()
    finally:
        c.close()


def test_a_crash_armed_at_n_leaves_exactly_the_first_n_commands_applied(direct, proxy):
    total = 5
    calls = []
    proxy.on_crash = calls.append
    for n in range(total + 1):
        proxy.reset()
        direct.flushall()
        proxy.arm_crash(n)
        if n < total:
            with pytest.raises(redis.ConnectionError):
                crash_pipeline(proxy.listen_path, total)
        else:
            assert crash_pipeline(proxy.listen_path, total)[-1] == total
        assert proxy.wait_drained()
        assert int(direct.get(k("c")) or 0) == n
        # the uncounted SET before the crashing INCR went through, nothing after it did
        applied = [direct.exists(OTHER + str(i)) for i in range(total)]
        assert applied == [1] * min(n + 1, total) + [0] * (total - n - 1)
        assert proxy.crashed == (n < total)
        if n < total:
            assert proxy.crash_info["units_done"] == n and proxy.crash_info["command"] == b"INCRBY"
    assert len(calls) == total
    # armed at 5 with 5 used: the next counted unit crashes
    with pytest.raises(redis.ConnectionError):
        client(proxy.listen_path).incr(k("c"))
    assert proxy.crashed and int(direct.get(k("c"))) == total


def transaction(path: str, *keys: str):
    c = client(path)
    try:
        pipe = c.pipeline(transaction=True)
        for key in keys:
            pipe.incr(key)
        return pipe.execute()
    finally:
        c.close()


def test_a_multi_exec_block_is_all_or_nothing_under_a_crash(direct, proxy):
    proxy.arm_crash(0)
    with pytest.raises(redis.ConnectionError):
        transaction(proxy.listen_path, k("a"), k("b"), OTHER + "x")
    assert proxy.wait_drained()
    assert direct.mget(k("a"), k("b"), OTHER + "x") == [None, None, None]
    assert proxy.crash_info["command"] == b"EXEC" and proxy.crash_info["block"] is True

    proxy.reset()
    proxy.arm_crash(1)  # the block is one unit: it passes whole, the next unit crashes
    assert transaction(proxy.listen_path, k("a"), k("b")) == [1, 1]
    with pytest.raises(redis.ConnectionError):
        transaction(proxy.listen_path, k("a"), k("b"))
    assert proxy.wait_drained()
    assert direct.mget(k("a"), k("b")) == [b"1", b"1"]

    proxy.reset()
    proxy.arm_crash(0)  # a block that touches no key under the prefix does not count
    assert transaction(proxy.listen_path, OTHER + "y", OTHER + "y") == [1, 2]
    with pytest.raises(redis.ConnectionError):
        client(proxy.listen_path).incr(k("a"))
    assert proxy.wait_drained() and direct.get(k("a")) == b"1"


def test_after_a_crash_every_connection_is_refused_and_on_crash_ran_once(direct, proxy):
    calls = []
    proxy.on_crash = calls.append
    bystander = client(proxy.listen_path)
    assert bystander.ping()
    proxy.arm_crash(0)
    with pytest.raises(redis.ConnectionError):
        client(proxy.listen_path).incr(k("a"))
    with pytest.raises(redis.ConnectionError):
        bystander.ping()  # the other connection of the same box was closed too
    for _ in range(3):
        with pytest.raises(redis.ConnectionError):
            client(proxy.listen_path).incr(k("a"))
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(proxy.listen_path)  # accepted, then closed at once
            try:
                assert s.recv(1) == b""
            except ConnectionResetError:
                pass
    assert len(calls) == 1 and calls[0]["units_done"] == 0
    assert proxy.stats()["refused_connections"] >= 6
    assert direct.get(k("a")) is None
    proxy.reset()
    assert not proxy.crashed and proxy.crash_info is None
    assert client(proxy.listen_path).incr(k("a")) == 1 and len(calls) == 1


def test_on_crash_may_use_the_proxy_and_its_errors_are_kept(direct, proxy):
    seen = []

    def on_crash(info):
        stats = proxy.stats()
        seen.append((stats["crashed"], stats["open_connections"]))
        raise RuntimeError("kill failed")

    proxy.on_crash = on_crash
    bystander = client(proxy.listen_path)
    assert bystander.ping()
    proxy.arm_crash(0)
    with pytest.raises(redis.ConnectionError):
        client(proxy.listen_path).incr(k("a"))
    # called before any connection was closed: the kill comes before a client can see the crash
    assert seen == [(True, 2)] and "kill failed" in proxy.stats()["on_crash_error"]
    with pytest.raises(redis.ConnectionError):
        bystander.ping()


# ------------------------------------------------------------------ per-client state


@pytest.mark.parametrize("writer", ["grader", "another student connection"])
def test_watch_multi_exec_through_the_proxy_behaves_as_direct(upstream, direct, proxy, writer):
    def run(path, concurrent):
        c = client(path, single_connection_client=True)
        other = direct if writer == "grader" else client(proxy.listen_path)
        c.set(k("w"), 1)
        assert c.execute_command("WATCH", k("w"))
        if concurrent:
            other.set(k("w"), 5)
        c.execute_command("MULTI")
        c.execute_command("INCR", k("w"))
        result = c.execute_command("EXEC")
        c.close()
        return result, direct.get(k("w"))

    for concurrent in (True, False):
        through = run(proxy.listen_path, concurrent)
        assert through == run(upstream.path, concurrent)
        assert through == ((None, b"5") if concurrent else ([2], b"2"))


# ------------------------------------------------------------------ pause and delay


def test_pause_holds_commands_until_resume(direct, proxy):
    c = client(proxy.listen_path, socket_timeout=0.2)
    assert c.set(k("p"), 1)
    proxy.pause()
    with pytest.raises(redis.TimeoutError):
        c.incr(k("p"))
    assert direct.get(k("p")) == b"1"  # not forwarded; the server answers the grader meanwhile
    proxy.resume()
    # the held INCR reaches the server once it resumes, as on a server that was stopped
    assert eventually(lambda: direct.get(k("p")) == b"2")
    assert c.incr(k("p")) == 3


def test_a_delay_holds_each_reply_not_the_command(direct, proxy):
    c = client(proxy.listen_path)
    c.set(k("d"), 1)
    proxy.set_delay(0.1)
    start = time.monotonic()
    assert c.get(k("d")) == b"1"
    assert time.monotonic() - start >= 0.1

    proxy.set_delay(0.6)
    done = {}

    def incr():
        done["value"] = c.incr(k("d"))
        done["at"] = time.monotonic()

    t = threading.Thread(target=incr)
    t.start()
    assert eventually(lambda: direct.get(k("d")) == b"2")
    applied_at = time.monotonic()
    t.join(5)
    assert done["value"] == 2 and applied_at < done["at"]  # run first, answered later
    proxy.set_delay(0)
    assert c.get(k("d")) == b"2" and proxy.stats()["delay"] == 0


# ------------------------------------------------------------------ what is refused


def assert_closed(sock: socket.socket) -> None:
    sock.settimeout(3)
    try:
        while sock.recv(1 << 16):
            pass
    except ConnectionResetError:
        pass


REFUSED = {
    "garbage": (b"\x00\x01\x02hello\r\n", "not an array of bulk strings"),
    "inline command": (b"SET fp:inline 1\r\n", "not an array of bulk strings"),
    "nested array": (b"*1\r\n*1\r\n$4\r\nPING\r\n", "not an array of bulk strings"),
    "negative length": (b"*3\r\n$3\r\nSET\r\n$9\r\nfp:broken\r\n$-1\r\n", "bad length"),
    "huge bulk length": (b"*3\r\n$3\r\nSET\r\n$9\r\nfp:broken\r\n$2000000000\r\n", "request too large"),
    "2 million arguments": (b"*2000000\r\n" + b"$3\r\nDEL\r\n" + b"$1\r\nx\r\n" * 1000, "too many arguments"),
    "over max_request_bytes": (pack("SET", k("broken"), b"v" * (2 << 20)), "request too large"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_malformed_request_closes_its_connection_only(direct, make_proxy, case):
    payload, reason = REFUSED[case]
    proxy = make_proxy(max_request_bytes=1 << 20)
    other = client(proxy.listen_path)
    assert other.set(k("ok"), 1)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(proxy.listen_path)
        s.sendall(pack("SET", k("before"), 1))
        assert s.recv(64) in (b"+OK\r\n",)
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while it was still sending
        assert_closed(s)
    assert proxy.stats()["requests_refused"] == {reason: 1}
    assert other.incr(k("ok")) == 2 and other.set(k("big"), b"v" * (900 << 10))  # within the bound: fine
    assert direct.get(k("before")) == b"1" and direct.get(k("broken")) is None
    assert direct.get(k("inline")) is None


def test_command_names_in_stats_are_bounded(direct, proxy):
    c = client(proxy.listen_path, protocol=2)
    for i in range(100):
        with pytest.raises(redis.ResponseError):
            c.execute_command(f"NOSUCH{i}")
    by = proxy.stats()["by_command"]
    assert len(by) <= 65 and by["(other)"] >= 100 - 64


def units(traffic: dict) -> dict:
    return {k: traffic[k] for k in ("units", "by_command")}


def test_traffic_counts_one_owners_units_on_the_runs_keys(direct, make_proxy):
    proxy = make_proxy(owner_of=lambda pid: "me" if pid == os.getpid() else None)
    c = client(proxy.listen_path, protocol=2)
    assert units(proxy.traffic("me")) == {"units": 0, "by_command": {}}
    c.eval("return redis.call('INCR', KEYS[1])", 1, k("n"))
    with c.pipeline(transaction=False) as p:  # one round trip, three units
        for name in ("a", "b", "c"):
            p.incr(k(name))
        p.execute()
    with c.pipeline() as tx:  # MULTI ... EXEC: one unit
        tx.incr(k("a"))
        tx.incr(k("b"))
        tx.execute()
    c.get("not-the-runs-key")  # not on the run's keys: not counted
    assert units(proxy.traffic("me")) == {"units": 5, "by_command": {"EVAL": 1, "INCRBY": 3, "EXEC": 1}}
    assert units(proxy.traffic("someone else")) == {"units": 0, "by_command": {}}
    proxy.reset()
    assert proxy.traffic("me")["units"] == 0


def test_traffic_is_counted_per_owner(direct, make_proxy):
    """Connections, round trips and commands of each owner: a pipeline is one round trip, a MULTI
    block sent at once is one, commands sent one by one are one each."""
    whose = {"now": "a"}
    proxy = make_proxy(owner_of=lambda pid: whose["now"])
    a = client(proxy.listen_path, protocol=2)
    a.set(k("x"), 1)
    start = proxy.traffic("a")
    pipe = a.pipeline(transaction=False)
    for i in range(16):
        pipe.get(k(f"s{i}"))
    pipe.execute()
    after_pipe = proxy.traffic("a")
    assert after_pipe["round_trips"] - start["round_trips"] == 1
    assert after_pipe["commands"]["GET"] == 16
    a.mget([k("x"), k("y")])
    for i in range(3):
        a.get(k(f"s{i}"))
    t = proxy.traffic("a")
    assert t["round_trips"] - after_pipe["round_trips"] == 4 and t["commands"]["MGET"] == 1
    assert t["commands"]["GET"] == 19 and t["connections"] == 1
    with a.pipeline() as tx:  # MULTI ... EXEC in one write
        tx.incr(k("x")).incr(k("x")).execute()
    assert proxy.traffic("a")["round_trips"] == t["round_trips"] + 1
    whose["now"] = "b"
    b = client(proxy.listen_path, protocol=2)
    b.get(k("x"))
    assert proxy.traffic("b")["commands"].get("GET") == 1 and proxy.traffic("b")["connections"] == 1
    assert proxy.traffic("a")["commands"]["GET"] == 19, "b's commands are not a's"
    assert proxy.traffic("nobody") == {"connections": 0, "round_trips": 0, "commands": {}, "units": 0, "by_command": {}}
    a.close()
    b.close()


def hold_and_write(proxy, owner, call, between):
    """Run ``call()`` in a thread; when the proxy holds its request, run ``between()``, then release."""
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("result", call()), daemon=True)
    t.start()
    fired = eventually(lambda: proxy.hold_state(owner) == "held" or not t.is_alive())
    fired = fired and proxy.hold_state(owner) == "held"
    if fired:
        between()
    proxy.release(owner)
    t.join(5)
    return out.get("result"), fired


def test_a_hold_after_a_key_lets_the_grader_write_between_a_read_and_what_follows(direct, make_proxy):
    """A GET outside WATCH, then the grader's write, then the WATCH: the transaction goes through on
    a stale balance; WATCH first, then the GET, then the write: EXEC is refused."""
    proxy = make_proxy(owner_of=lambda pid: "me")
    c = client(proxy.listen_path, protocol=2)

    def get_then_watch():
        seen = int(c.get(k("acct")))
        with c.pipeline() as tx:
            tx.watch(k("acct"))
            tx.multi()
            tx.decrby(k("acct"), min(seen, 100))
            return tx.execute()

    def watch_then_get():
        with c.pipeline() as tx:
            tx.watch(k("acct"))
            seen = int(tx.get(k("acct")))
            tx.multi()
            tx.decrby(k("acct"), min(seen, 100))
            try:
                return tx.execute()
            except redis.WatchError:
                return "refused"

    for fn, want, final in ((get_then_watch, [-100], b"-100"), (watch_then_get, "refused", b"0")):
        direct.set(k("acct"), 100)
        proxy.hold_after("me", k("acct"))
        assert proxy.hold_state("me") == "armed"
        result, fired = hold_and_write(proxy, "me", fn, lambda: direct.set(k("acct"), 0))
        assert fired and result == want and direct.get(k("acct")) == final, (fn.__name__, result)
        assert proxy.hold_state("me") is None
    # a request that names only other keys does not fire it; one naming none of the run's keys is not held
    direct.set(k("acct"), 100)
    proxy.hold_after("me", k("acct"))
    c.get(k("other"))
    assert proxy.hold_state("me") == "armed"
    c.get(k("acct"))
    assert proxy.hold_state("me") == "named"
    assert c.ping() and c.get("not-the-runs-key") is None and proxy.hold_state("me") == "named"
    result, fired = hold_and_write(proxy, "me", lambda: c.incr(k("acct")), lambda: direct.set(k("acct"), 7))
    assert fired and result == 8
    proxy.hold_after("me", k("acct"))  # released before it fired: disarmed, nothing held
    proxy.release("me")
    c.get(k("acct"))
    assert c.incr(k("acct")) == 9 and proxy.hold_state("me") is None
    c.close()


# ------------------------------------------------------------------ a client that never reads


class Flood:
    """A client that sends ``payload`` and never reads a byte, until ``stop()`` closes it (a send the
    proxy no longer reads gives up after ``seconds``)."""

    def __init__(self, path: str, payload: bytes, seconds: float) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.sock.settimeout(seconds)
        self.thread = threading.Thread(target=self._send, args=(payload,), daemon=True)
        self.thread.start()

    def _send(self, payload: bytes) -> None:
        try:
            self.sock.sendall(payload)
        except OSError:  # a timeout, or the connection closed under it
            pass

    def stop(self) -> None:
        self.thread.join(10)
        self.sock.close()


def test_replies_a_client_does_not_read_stop_at_the_bound(upstream, direct, make_proxy):
    bound = 1 << 20
    proxy = make_proxy(max_pending_reply_bytes=bound)
    direct.set(k("v"), b"x" * (64 << 10))
    f = Flood(proxy.listen_path, pack("GET", k("v")) * 200, 1.0)  # 12.5 MB of replies

    def settled():  # the bound reached, or the server hung up on the flood
        stats = proxy.stats()
        return stats["connections"] and (stats["pending_reply_bytes"] == bound or not stats["server_connections"])

    assert eventually(settled)
    if upstream.kind == "redis-server":
        # (fakeredis's request handler makes its socket non-blocking: a reply that finds the send buffer
        # full ends the connection, so that server may hang up before the proxy's bound is reached)
        assert proxy.stats()["pending_reply_bytes"] == bound
    assert proxy.stats()["peak_pending_reply_bytes"] <= bound
    other = client(proxy.listen_path)
    assert other.set(k("o"), 1) and other.get(k("o")) == b"1"
    f.stop()
    assert eventually(lambda: proxy.stats()["buffered_bytes"] == 0)  # closed: nothing kept
    assert proxy.stats()["peak_pending_reply_bytes"] <= bound


def test_100k_pipelined_gets_of_1mb_cannot_grow_the_proxy(direct, make_proxy):
    bound, request = 4 << 20, 1 << 20
    proxy = make_proxy(max_pending_reply_bytes=bound, max_request_bytes=request)
    direct.set(k("big"), b"x" * (1 << 20))
    f = Flood(proxy.listen_path, pack("GET", k("big")) * 100_000, 1.0)
    other = client(proxy.listen_path)
    for i in range(20):
        assert other.set(k("o"), i) and other.get(k("o")) == str(i).encode()
    f.stop()
    stats = proxy.stats()
    assert stats["commands"] > 1000  # the flood did reach the proxy
    assert stats["peak_pending_reply_bytes"] <= bound
    assert stats["peak_buffered_bytes"] <= bound + 2 * (request + READ_CHUNK)
    assert eventually(lambda: proxy.stats()["buffered_bytes"] == 0)


def test_close_is_idempotent_and_removes_the_socket(proxy):
    c = client(proxy.listen_path)
    assert c.ping()
    proxy.close()
    proxy.close()
    assert not os.path.exists(proxy.listen_path)
    with pytest.raises(redis.ConnectionError):
        c.ping()
