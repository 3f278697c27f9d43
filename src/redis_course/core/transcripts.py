"""redis-cli transcripts in the docs: found, executed, and compared with what the page shows.

A transcript is a fenced code block (any info string, possibly indented inside a content tab)
whose first non-empty line starts with ``redis> ``::

    redis> INCR visits
    (integer) 1
    redis> GET visits
    "1"

Each ``redis>`` line is split into arguments the way redis-cli splits them (double quotes with
``\\n``/``\\xHH`` escapes, single quotes with ``\\'``), sent with ``execute_command`` (RESP2,
``decode_responses=True``), and the reply is formatted exactly as redis-cli 7 prints it on a
terminal: ``(integer) 1``, ``"1"``, ``OK``, ``(nil)``, ``(error) ERR ...``, ``1) "a"``,
``(empty array)``.  Every block starts on an empty database:

* fakeredis: a fresh ``FakeServer`` emulating Redis 7.0 (``compat.FAKE_SERVER_VERSION``) per block;
* a real server: ``FLUSHALL`` before each block, so only a server the course owns (a private
  ``redis-server`` from :mod:`redis_course.core.servers`) is accepted; the command guard refuses
  FLUSHALL anywhere else.

    from redis_course.core import transcripts
    from redis_course import private_redis

    transcripts.run_page("docs/en/00-start/index.md", transcripts.fake_backend())
    with private_redis() as srv:
        transcripts.run_page("docs/en/00-start/index.md", srv.client())

To tell a status reply (``+OK``) from a bulk string (``$2 OK``) and to keep the full error text
(redis-py drops the ``ERR `` prefix), replies are read raw: a parser that marks status replies
(:class:`Status`) and keeps errors verbatim (:class:`ReplyError`), and no response callbacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import redis

from .compat import FAKE_SERVER_VERSION, ReplyError, Status, raw_fake_connection_class, raw_parser_class  # noqa: F401 (re-exported)

_PROMPT_RE = re.compile(r"^redis(?:\(TX\))?> ")
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})(?P<info>.*)$")


RawParser = raw_parser_class()


@dataclass
class Backend:
    """Where transcripts run.  ``fresh()`` returns a raw client on an empty database."""

    kind: str  # "fakeredis" or "redis"
    client: Any = None  # the owned real client (for "redis")

    def fresh(self) -> redis.Redis:
        if self.kind == "fakeredis":
            import fakeredis

            server = fakeredis.FakeServer(version=FAKE_SERVER_VERSION)
            raw = fakeredis.FakeRedis(
                server=server,
                version=FAKE_SERVER_VERSION,
                protocol=2,
                decode_responses=True,
                connection_class=raw_fake_connection_class(),
                single_connection_client=True,
            )
        else:
            pool = self.client.connection_pool
            kwargs = dict(pool.connection_kwargs)
            kwargs.update(parser_class=RawParser, decode_responses=True, protocol=2)
            raw = redis.Redis(
                connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs),
                single_connection_client=True,
            )
            raw.execute_command("FLUSHALL")  # refused by the guard unless the server is the course's own
        raw.response_callbacks = {}
        return raw


def fake_backend() -> Backend:
    return Backend("fakeredis")


def backend_for(client: Any) -> Backend:
    """The backend of a course client: fakeredis (fresh server per block) or its real server."""
    import fakeredis

    if isinstance(client, Backend):
        return client
    if isinstance(client, fakeredis.FakeRedis) or getattr(client, "is_fake", False):
        return fake_backend()
    return Backend("redis", client)


# ------------------------------------------------------------------ redis-cli formatting


def quote(value: str | bytes) -> str:
    """A bulk string as redis-cli prints it (``sdscatrepr``): quoted, C escapes, ``\\xHH`` for the rest."""
    data = value.encode("utf-8", errors="surrogateescape") if isinstance(value, str) else value
    out = ['"']
    for b in data:
        c = chr(b)
        if c in '\\"':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "\a":
            out.append("\\a")
        elif c == "\b":
            out.append("\\b")
        elif 0x20 <= b <= 0x7E:
            out.append(c)
        else:
            out.append(f"\\x{b:02x}")
    out.append('"')
    return "".join(out)


def _format(reply: Any, prefix: str) -> str:
    if isinstance(reply, redis.exceptions.ResponseError):
        return f"(error) {getattr(reply, 'text', str(reply))}\n"
    if isinstance(reply, Status):
        return f"{reply}\n"
    if isinstance(reply, bool):  # never from the raw parser; be explicit anyway
        return f"(integer) {int(reply)}\n"
    if isinstance(reply, int):
        return f"(integer) {reply}\n"
    if reply is None:
        return "(nil)\n"
    if isinstance(reply, float):
        return f"(double) {reply!r}\n"
    if isinstance(reply, (str, bytes)):
        return quote(reply) + "\n"
    if isinstance(reply, (list, tuple)):
        if not reply:
            return "(empty array)\n"
        width = len(str(len(reply)))
        inner = prefix + " " * (width + 2)
        out = []
        for i, item in enumerate(reply):
            out.append(f"{'' if i == 0 else prefix}{i + 1:>{width}}) ")
            out.append(_format(item, inner))
        return "".join(out)
    raise TypeError(f"cannot format a reply of type {type(reply).__name__}: {reply!r}")


def format_reply(reply: Any) -> list[str]:
    """The lines redis-cli 7 prints on a terminal for ``reply`` (a raw RESP2 reply)."""
    return _format(reply, "").rstrip("\n").split("\n")


# ------------------------------------------------------------------ parsing


class TranscriptSyntaxError(ValueError):
    pass


def split_args(line: str) -> list[str]:
    """Split a command line into arguments exactly like redis-cli (``sdssplitargs``)."""
    args: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return args
        cur: list[str] = []
        inq = insq = False
        while True:
            if inq:
                if i >= n:
                    raise TranscriptSyntaxError(f"unbalanced double quotes in {line!r}")
                c = line[i]
                if c == "\\" and i + 3 < n and line[i + 1] == "x" and _ishex(line[i + 2]) and _ishex(line[i + 3]):
                    cur.append(chr(int(line[i + 2 : i + 4], 16)))
                    i += 3
                elif c == "\\" and i + 1 < n:
                    i += 1
                    cur.append({"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a"}.get(line[i], line[i]))
                elif c == '"':
                    if i + 1 < n and not line[i + 1].isspace():
                        raise TranscriptSyntaxError(f"closing quote must be followed by a space in {line!r}")
                    inq = False
                    i += 1
                    break
                else:
                    cur.append(c)
            elif insq:
                if i >= n:
                    raise TranscriptSyntaxError(f"unbalanced single quotes in {line!r}")
                c = line[i]
                if c == "\\" and i + 1 < n and line[i + 1] == "'":
                    i += 1
                    cur.append("'")
                elif c == "'":
                    if i + 1 < n and not line[i + 1].isspace():
                        raise TranscriptSyntaxError(f"closing quote must be followed by a space in {line!r}")
                    insq = False
                    i += 1
                    break
                else:
                    cur.append(c)
            else:
                if i >= n or line[i] in " \n\r\t\0":
                    break
                c = line[i]
                if c == '"':
                    inq = True
                elif c == "'":
                    insq = True
                else:
                    cur.append(c)
            i += 1
        args.append(_latin1_to_str("".join(cur)))


def _ishex(c: str) -> bool:
    return c in "0123456789abcdefABCDEF"


def _latin1_to_str(s: str) -> str:
    """Arguments with ``\\xHH`` escapes are bytes; keep valid UTF-8 sequences as text."""
    if all(ord(c) < 0x80 for c in s) or any(ord(c) > 0xFF for c in s):
        return s
    try:
        return s.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return s


@dataclass
class Step:
    line: int  # 1-based line number in the page of the ``redis>`` line
    command: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    path: str
    line: int  # 1-based line of the opening fence
    steps: list[Step] = field(default_factory=list)


@dataclass
class Mismatch:
    path: str
    line: int
    command: str
    expected: list[str]
    actual: list[str]

    def __str__(self) -> str:
        exp = "\n".join(f"    {x}" for x in self.expected) or "    (nothing)"
        act = "\n".join(f"    {x}" for x in self.actual) or "    (nothing)"
        return f"{self.path}:{self.line}: redis> {self.command}\n  page shows:\n{exp}\n  redis-cli prints:\n{act}"


def find_blocks(text: str, path: str = "<text>") -> list[Block]:
    """Every transcript block of a Markdown page, in order."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m or (m.group("ticks")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        indent, ticks = m.group("indent"), m.group("ticks")
        close = re.compile(rf"^{re.escape(indent)}{re.escape(ticks[0])}{{{len(ticks)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1 : j]]
        first = next((k for k, ln in enumerate(body) if ln.strip()), None)
        if first is not None and _PROMPT_RE.match(body[first]):
            block = Block(path, i + 1)
            for k, ln in enumerate(body[first:], start=first):
                pm = _PROMPT_RE.match(ln)
                if pm:
                    block.steps.append(Step(i + 2 + k, ln[pm.end() :].rstrip()))
                elif ln.strip():
                    block.steps[-1].expected.append(ln.rstrip())
            blocks.append(block)
        i = j + 1
    return blocks


# ------------------------------------------------------------------ running


def run_block(block: Block, backend: Backend) -> list[Mismatch]:
    """Run one block on an empty database; a mismatch for every step whose output differs."""
    raw = backend.fresh()
    problems: list[Mismatch] = []
    try:
        for step in block.steps:
            try:
                args = split_args(step.command)
            except TranscriptSyntaxError as exc:
                actual = [f"Invalid argument(s): {exc}"]
            else:
                if not args:
                    actual = []
                else:
                    try:
                        reply = raw.execute_command(*args)
                    except redis.exceptions.ResponseError as exc:
                        reply = exc
                    actual = format_reply(reply)
            if actual != step.expected:
                problems.append(Mismatch(block.path, step.line, step.command, step.expected, actual))
    finally:
        raw.close()
    return problems


def run_text(text: str, client: Any, path: str = "<text>") -> list[Mismatch]:
    backend = backend_for(client)
    problems: list[Mismatch] = []
    for block in find_blocks(text, path):
        problems += run_block(block, backend)
    return problems


def run_page(path: str | Path, client: Any) -> list[Mismatch]:
    """Run every transcript of the page at ``path``; [] when the page shows exactly what redis-cli prints.

    ``client`` picks the backend: a fakeredis client (or :func:`fake_backend`) runs each block on a
    fresh fakeredis server; a client of a server the course owns runs each block after FLUSHALL.
    """
    path = Path(path)
    return run_text(path.read_text(encoding="utf-8"), client, str(path))


def pages(docs: Path | None = None) -> list[Path]:
    """Every hand-written Markdown page under docs/ (all languages) that holds a transcript."""
    from .. import paths

    root = docs or paths.DOCS
    return sorted(
        p for p in root.rglob("*.md") if p.name != "notebook.md" and find_blocks(p.read_text(encoding="utf-8"), str(p))
    )


def main(argv: Iterable[str] | None = None) -> int:  # pragma: no cover - a convenience for authors
    """``python -m redis_course.core.transcripts [PAGE ...]``: check pages on fakeredis."""
    import sys

    targets = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or pages()
    problems = [p for t in targets for p in run_page(t, fake_backend())]
    for p in problems:
        print(p)
    print(f"{len(targets)} page(s), {len(problems)} mismatch(es)")
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
