"""Every redis-cli transcript in docs/ (all languages) prints exactly what the page shows.

Each block runs on an empty database: a fresh fakeredis server, and a private redis-server
(FLUSHALL before each block is fine there: the course owns it).  The formatter is checked against
redis-cli's own output where redis-cli is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from foundation import shared
from redis_course import paths
from redis_course.core import transcripts
from redis_course.core.transcripts import ReplyError, Status, format_reply, split_args

REQUIRE_REAL = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"
PAGES = transcripts.pages()


def _page_id(p):
    return str(p.relative_to(paths.DOCS))


@pytest.fixture(scope="module")
def private_server():
    with shared.private_server_or_skip("transcripts") as srv:
        yield srv


def test_docs_have_transcripts():
    # the course map and the start page show at least one; an empty list would make the checks below vacuous
    assert PAGES, "no redis-cli transcript found under docs/"
    langs = {p.relative_to(paths.DOCS).parts[0] for p in PAGES}
    assert langs == set(paths.LANGS)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_on_fakeredis(page):
    problems = transcripts.run_page(page, transcripts.fake_backend())
    assert not problems, "\n\n".join(map(str, problems))


@pytest.mark.real_redis
@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_on_real_redis(page, private_server):
    problems = transcripts.run_page(page, private_server.client(prefix=""))
    assert not problems, "\n\n".join(map(str, problems))


# ------------------------------------------------------------------ finding and parsing

PAGE = """# Title { #t }

=== "redis-cli"

    ```text
    redis> SET greeting "hello world"
    OK

    redis> GET greeting
    "hello world"
    ```

```python
r.get("x")
```

~~~console
redis> INCR n
(integer) 1
~~~
"""


def test_find_blocks_indented_and_any_info_string():
    blocks = transcripts.find_blocks(PAGE, "p.md")
    assert [len(b.steps) for b in blocks] == [2, 1]
    first = blocks[0].steps
    assert first[0].command == 'SET greeting "hello world"' and first[0].expected == ["OK"]
    assert first[1].expected == ['"hello world"']
    assert first[0].line == 6 and first[1].line == 9
    assert blocks[1].steps[0].expected == ["(integer) 1"]


def test_split_args_like_redis_cli():
    assert split_args('SET k "a b"') == ["SET", "k", "a b"]
    assert split_args("SET k 'it\\'s'") == ["SET", "k", "it's"]
    assert split_args('SET k "line\\nnext \\"q\\""') == ["SET", "k", 'line\nnext "q"']
    assert split_args('SET k "\\xc3\\xa9"') == ["SET", "k", "é"]
    assert split_args("  GET   k  ") == ["GET", "k"]
    with pytest.raises(transcripts.TranscriptSyntaxError):
        split_args('SET k "open')
    with pytest.raises(transcripts.TranscriptSyntaxError):
        split_args('SET k "a"b')


# ------------------------------------------------------------------ the formatter


def test_format_scalars():
    assert format_reply(Status("OK")) == ["OK"]
    assert format_reply("OK") == ['"OK"']  # a bulk string is quoted, a status is not
    assert format_reply(7) == ["(integer) 7"]
    assert format_reply(None) == ["(nil)"]
    assert format_reply("") == ['""']
    assert format_reply("1.5") == ['"1.5"']
    assert format_reply([]) == ["(empty array)"]


def test_format_errors_keep_the_full_text():
    assert format_reply(ReplyError("ERR value is not an integer or out of range")) == [
        "(error) ERR value is not an integer or out of range"
    ]
    assert format_reply(ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value")) == [
        "(error) WRONGTYPE Operation against a key holding the wrong kind of value"
    ]


def test_format_quoting():
    assert format_reply('say "hi"\\\n\r\t') == ['"say \\"hi\\"\\\\\\n\\r\\t"']
    assert format_reply("é") == ['"\\xc3\\xa9"']
    assert format_reply("\x00\x7f") == ['"\\x00\\x7f"']


def test_format_nested_arrays():
    reply = [1, [2, [3, "x"]], Status("FINE"), [], ReplyError("ERR boom")]
    assert format_reply(reply) == [
        "1) (integer) 1",
        "2) 1) (integer) 2",
        "   2) 1) (integer) 3",
        '      2) "x"',
        "3) FINE",
        "4) (empty array)",
        "5) (error) ERR boom",
    ]
    eleven = [str(i) for i in range(1, 12)]
    lines = format_reply(["0", eleven])
    assert lines[:3] == ['1) "0"', '2)  1) "1"', '    2) "2"']
    assert lines[-1] == '   11) "11"'


def test_fakeredis_replies_are_raw():
    raw = transcripts.fake_backend().fresh()
    assert isinstance(raw.execute_command("SET", "k", "OK"), Status)
    got = raw.execute_command("GET", "k")
    assert got == "OK" and not isinstance(got, Status)
    with pytest.raises(ReplyError) as info:
        raw.execute_command("INCR", "k")
    assert info.value.text == "ERR value is not an integer or out of range"
    assert raw.execute_command("ZADD", "z", "1.5", "a") == 1
    assert raw.execute_command("ZSCORE", "z", "a") == "1.5"


def test_each_block_starts_empty():
    text = "```text\nredis> INCR n\n(integer) 1\n```\n\n```text\nredis> INCR n\n(integer) 1\n```\n"
    assert transcripts.run_text(text, transcripts.fake_backend()) == []


def test_wrong_expected_reply_is_detected():
    text = "```text\nredis> INCR n\n(integer) 1\nredis> INCR n\n(integer) 3\nredis> GET n\n2\n```\n"
    problems = transcripts.run_text(text, transcripts.fake_backend(), "page.md")
    assert [(p.line, p.command, p.expected, p.actual) for p in problems] == [
        (4, "INCR n", ["(integer) 3"], ["(integer) 2"]),
        (6, "GET n", ["2"], ['"2"']),
    ]
    assert "page.md:4: redis> INCR n" in str(problems[0])


def test_missing_reply_lines_are_detected():
    text = '```text\nredis> RPUSH l a b\n(integer) 2\nredis> LRANGE l 0 -1\n1) "a"\n```\n'
    problems = transcripts.run_text(text, transcripts.fake_backend())
    assert len(problems) == 1 and problems[0].actual == ['1) "a"', '2) "b"']


def test_real_backend_refuses_a_server_the_course_does_not_own():
    from foundation.shared import require_real_redis
    from redis_course import ServerWideCommandRefused, connect

    url = require_real_redis()
    client = connect(url, prefix="course:test:transcripts:")
    with pytest.raises(ServerWideCommandRefused):
        transcripts.run_text("```text\nredis> PING\nPONG\n```\n", client)


REDIS_CLI_CASES = [
    ["SET", "k", "v"],
    ["GET", "k"],
    ["GET", "missing"],
    ["INCR", "k"],
    ["INCRBYFLOAT", "f", "1.5"],
    ["RPUSH", "big", *map(str, range(1, 12))],
    ["LRANGE", "big", "0", "-1"],
    ["LRANGE", "none", "0", "-1"],
    ["SET", "u", 'h\xe9llo\n"q"\\'],
    ["GET", "u"],
    ["PING"],
    ["TYPE", "big"],
    ["HSET", "h", "a", "1"],
    ["HGETALL", "h"],
    ["ZADD", "z", "1.5", "a"],
    ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
    ["EVAL", "return {1,{2,{3,'x'}},redis.status_reply('FINE'),{}}", "0"],
    ["LPUSH", "k", "x"],
    ["EVAL", "return redis.error_reply('MY err')", "0"],
    ["SCAN", "0", "COUNT", "100"],
]


@pytest.mark.real_redis
def test_formatter_matches_redis_cli(private_server):
    """Ground truth: what redis-cli itself prints (--no-raw: the terminal format) for the same replies."""
    cli = shutil.which("redis-cli")
    if not cli:
        if REQUIRE_REAL:
            pytest.fail("redis-cli is required (COURSE_REQUIRE_REAL_REDIS=1)")
        pytest.skip("redis-cli is not installed")
    raw = transcripts.backend_for(private_server.client(prefix="")).fresh()
    for args in REDIS_CLI_CASES:
        try:
            reply = raw.execute_command(*args)
        except ReplyError as exc:
            reply = exc
        # the same command in database 1, so redis-cli sees the same state as `raw` (database 0)
        out = subprocess.run(
            [cli, "-p", str(private_server.port), "-n", "1", "--no-raw", *args],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
        assert format_reply(reply) == out.rstrip("\n").split("\n"), args
