"""What Redis really answers to a question: the proof behind every ``predict`` and ``race`` answer.

The transcripts' runner does the work (:mod:`redis_course.core.transcripts`): commands are split like
redis-cli splits them, sent raw, and their replies formatted as redis-cli 7 prints them, on an empty
database — a fresh fakeredis server, a server the course owns after FLUSHALL, or a shared server
whose keys of the run's prefix are deleted first (:class:`PrefixedBackend`: nothing else is touched).

* ``predict``: the commands run in order; the reply of the last one is the answer.
* ``race``: every interleaving of the two clients' steps (each client keeps its own order; a step is
  one command, so a ``MULTI`` … ``EXEC`` of a client can be interleaved with the other client's
  commands exactly as on a network) runs on a fresh database with two connections; the answer is
  the set of replies of ``check`` over all interleavings.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Iterator

import redis

from ..core.transcripts import Backend, format_reply, split_args
from . import _COND, _STEP_VAR

MAX_ORDERS = 500


class PrefixedBackend:
    """A shared server (``127.0.0.1:6379``) that is never flushed: every key a question names is put
    under the course client's key prefix, and the prefix's keys are deleted before each run.

    Which arguments are keys the server itself says (``COMMAND GETKEYS``, asked on a connection of its
    own so that it is never queued inside a question's ``MULTI``); an argument equal to a key name
    that is not the key itself would be ambiguous and is refused, and no reply the questions check
    holds a key name.
    """

    kind = "redis-prefixed"

    def __init__(self, client: Any):
        self.client = client  # a course client (backend.connect) with a prefix of its own
        self.prefix = client.prefix

    def _raw(self) -> redis.Redis:
        from ..core.transcripts import RawParser

        pool = self.client.connection_pool
        kwargs = dict(pool.connection_kwargs)
        kwargs.update(parser_class=RawParser, decode_responses=True, protocol=2)
        raw = redis.Redis(
            connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs),
            single_connection_client=True,
        )
        raw.response_callbacks = {}
        return _Prefixing(raw, self)

    def fresh(self) -> "_Prefixing":
        self.client.cleanup()
        return self._raw()

    def keys_of(self, args: list[str]) -> list[str]:
        try:
            return list(self.client.command_getkeys(*args))
        except redis.exceptions.ResponseError:  # no key arguments (MULTI, EXEC) or not a command at all
            return []


class _Prefixing:
    """A raw client whose commands have their key arguments under the backend's prefix."""

    def __init__(self, raw: redis.Redis, backend: PrefixedBackend):
        self.raw, self.backend = raw, backend
        self.connection_pool = raw.connection_pool

    def execute_command(self, *args: str) -> Any:
        args = list(args)
        keys = self.backend.keys_of(args)
        for key in set(keys):
            at = [i for i, a in enumerate(args) if i > 0 and a == key]
            if len(at) != keys.count(key):
                raise ValueError(f"{' '.join(args)!r}: {key!r} is both a key and another argument")
            for i in at:
                args[i] = self.backend.prefix + key
        return self.raw.execute_command(*args)

    def close(self) -> None:
        self.raw.close()


def _run(raw: redis.Redis, command: str) -> Any:
    try:
        return raw.execute_command(*split_args(command))
    except redis.exceptions.ResponseError as exc:
        return exc


def _second_client(first: Any, backend: Any) -> Any:
    """Another connection to the database of ``first`` (the same fakeredis server, or the same real one)."""
    if isinstance(backend, PrefixedBackend):
        return backend._raw()
    pool = first.connection_pool
    raw = redis.Redis(
        connection_pool=type(pool)(connection_class=pool.connection_class, **pool.connection_kwargs),
        single_connection_client=True,
    )
    raw.response_callbacks = {}
    return raw


def predict_reply(q: dict, backend: Backend) -> str:
    """The reply of the question's last command, as redis-cli prints it."""
    raw = backend.fresh()
    try:
        reply = None
        for command in q["commands"]:
            reply = _run(raw, command)
        return "\n".join(format_reply(reply))
    finally:
        raw.close()


def _value(reply: Any) -> Any:
    """What ``as: x`` keeps: an integer when the reply is one (or a string of one), the first element
    of an array, "" for nil."""
    if isinstance(reply, (list, tuple)):
        reply = reply[0] if reply else None
    if reply is None:
        return ""
    if isinstance(reply, bool):
        return int(reply)
    if isinstance(reply, int):
        return reply
    s = reply.decode() if isinstance(reply, bytes) else str(reply)
    return int(s) if re.fullmatch(r"-?\d+", s) else s


def _holds(cond: str, env: dict) -> bool:
    name, op, literal = _COND.match(cond).groups()
    a = env.get(name, "")
    b: Any = literal[1:-1] if literal.startswith('"') else int(literal)
    if isinstance(a, str) != isinstance(b, str):
        return op == "!="
    return {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]


def _fill(command: str, env: dict) -> str:
    def sub(m: re.Match) -> str:
        v = env.get(m.group(1), "")
        if m.group(2):
            v = (v if isinstance(v, int) else 0) + int(m.group(2))
        return str(v)

    return _STEP_VAR.sub(sub, command)


def orders(q: dict) -> Iterator[list[tuple[str, int]]]:
    """Every interleaving of the clients' steps: a list of (client, step index)."""
    (a, sa), (b, sb) = q["clients"].items()
    n, m = len(sa), len(sb)
    for where_a in itertools.combinations(range(n + m), n):
        order, i, j = [], 0, 0
        for k in range(n + m):
            if k in where_a:
                order.append((a, i))
                i += 1
            else:
                order.append((b, j))
                j += 1
        yield order


def run_order(q: dict, backend: Backend, order: list[tuple[str, int]]) -> str:
    first = backend.fresh()
    second = _second_client(first, backend)
    conns = dict(zip(q["clients"], (first, second)))
    envs: dict[str, dict] = {name: {} for name in q["clients"]}
    try:
        for command in q.get("setup") or []:
            _run(first, command)
        for name, idx in order:
            step, env = q["clients"][name][idx], envs[name]
            if step.get("if") is not None and not _holds(str(step["if"]), env):
                continue
            reply = _run(conns[name], _fill(step["run"], env))
            if step.get("as"):
                env[step["as"]] = _value(reply)
        return "\n".join(format_reply(_run(first, q["check"])))
    finally:
        second.close()
        first.close()


def race_replies(q: dict, backend: Backend) -> dict[str, list[str]]:
    """``{final reply: [an interleaving that gives it, as "A1 B1 A2 ..."]}`` over every interleaving."""
    out: dict[str, list[str]] = {}
    for count, order in enumerate(orders(q)):
        if count >= MAX_ORDERS:
            raise ValueError(f"question {q['id']}: more than {MAX_ORDERS} interleavings; keep races short")
        reply = run_order(q, backend, order)
        out.setdefault(reply, []).append(" ".join(f"{c}{i + 1}" for c, i in order))
    return out


def problems(q: dict, backend: Backend) -> list[str]:
    """Where the marked answer of ``q`` is not what Redis does on ``backend``; [] when it is."""
    from . import option, right_ids

    marked = {option(q, oid)["reply"] for oid in right_ids(q)}
    if q["kind"] == "predict":
        got = predict_reply(q, backend)
        out = []
        if got not in marked:
            out.append(f"{q['id']}: the marked answer is {sorted(marked)}, Redis prints {got!r}")
        others = [o["id"] for o in q["options"] if o["reply"] == got and o["id"] not in right_ids(q)]
        if others:
            out.append(f"{q['id']}: option(s) {others} marked wrong print what Redis prints")
        return out
    if q["kind"] == "race":
        got = race_replies(q, backend)
        out = []
        for reply in sorted(set(got) - marked):
            out.append(f"{q['id']}: {reply!r} is possible ({got[reply][0]}) but not marked right")
        for reply in sorted(marked - set(got)):
            out.append(f"{q['id']}: {reply!r} is marked right but no interleaving gives it")
        return out
    return []
