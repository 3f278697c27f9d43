"""Keys that are not the course's: written before the suite, checked untouched after it.

The real server at 127.0.0.1:6379 may hold somebody else's data.  The course promises to write only
under its own prefix, delete only its own keys and never run server-wide commands there.  To prove
it, the test session seeds keys under a unique non-course prefix (``foreign:<hex>:``), snapshots
them (type, DUMP of the value, PTTL), runs the whole suite, and then checks every key is still there
with the same value and a TTL that only ran down by the time that passed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

KINDS = ("string", "hash", "list", "set")
TTL_MS = 3_600_000  # about an hour
TTL_EVERY = 5  # one key in five gets a TTL
BATCH = 1000
SLACK_MS = 5  # PTTL is read a little after PEXPIRE; rounding and clocks


def new_prefix() -> str:
    return f"foreign:{secrets.token_hex(6)}:"


@dataclass
class Snapshot:
    prefix: str
    keys: dict[str, tuple[str, bytes, int]] = field(default_factory=dict)  # key -> (type, DUMP, PTTL)
    read_at: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> server ms around its read


def seed(r, prefix: str, count: int = 10_000) -> Snapshot:
    """Write ``count`` keys of all four types under ``prefix`` (some with ~1 h TTLs) and snapshot them.

    ``r`` must not decode responses (DUMP payloads are bytes).  Cost: ~count writes in pipelines.
    """
    pipe = r.pipeline(transaction=False)
    for i in range(count):
        key, kind = f"{prefix}{i:05d}", KINDS[i % len(KINDS)]
        if kind == "string":
            pipe.set(key, f"value-{i}")
        elif kind == "hash":
            pipe.hset(key, mapping={"a": i, "b": f"x{i}"})
        elif kind == "list":
            pipe.rpush(key, i, "b", "c")
        else:
            pipe.sadd(key, i, "m", "n")
        if i % TTL_EVERY == 0:
            pipe.pexpire(key, TTL_MS + i)
        if i % BATCH == BATCH - 1:
            pipe.execute()
    pipe.execute()
    return snapshot(r, prefix)


def _server_ms(reply) -> float:
    seconds, micros = reply
    return int(seconds) * 1000 + int(micros) / 1000


def _read(r, keys: list[str]) -> tuple[dict[str, tuple[str, bytes, int]], dict[str, tuple[float, float]]]:
    """Type, DUMP and PTTL of every key, and for each key the server's clock (TIME, ms) just before
    and just after its batch was read: TTLs are compared with the server's own clock, so a slow or
    loaded client cannot make a TTL look as if it ran down too fast."""
    out: dict[str, tuple[str, bytes, int]] = {}
    when: dict[str, tuple[float, float]] = {}
    for start in range(0, len(keys), BATCH):
        chunk = keys[start : start + BATCH]
        pipe = r.pipeline(transaction=False)
        pipe.time()
        for k in chunk:
            pipe.type(k)
            pipe.dump(k)
            pipe.pttl(k)
        pipe.time()
        replies = pipe.execute()
        before, after = _server_ms(replies[0]), _server_ms(replies[-1])
        for j, k in enumerate(chunk):
            kind, dump, pttl = replies[1 + 3 * j : 4 + 3 * j]
            out[k] = (kind.decode() if isinstance(kind, bytes) else kind, dump, int(pttl))
            when[k] = (before, after)
    return out, when


def _scan(r, prefix: str) -> list[str]:
    return sorted(k.decode() if isinstance(k, bytes) else k for k in r.scan_iter(match=prefix + "*", count=1000))


def snapshot(r, prefix: str) -> Snapshot:
    keys, when = _read(r, _scan(r, prefix))
    return Snapshot(prefix, keys, when)


def verify(r, snap: Snapshot) -> list[str]:
    """What changed since ``snap``: missing, extra or changed keys, and TTLs that grew or ran too fast."""
    now, when = _read(r, list(snap.keys))
    problems = []
    for key, (kind, dump, pttl) in snap.keys.items():
        kind2, dump2, pttl2 = now[key]
        if kind2 == "none":
            problems.append(f"{key}: deleted (was a {kind})")
            continue
        if kind2 != kind:
            problems.append(f"{key}: type {kind} became {kind2}")
        elif dump2 != dump:
            problems.append(f"{key}: value changed")
        if pttl == -1 and pttl2 != -1:
            problems.append(f"{key}: gained a TTL ({pttl2} ms)")
        elif pttl >= 0:
            if pttl2 == -1:
                problems.append(f"{key}: lost its TTL (had {pttl} ms)")
            elif pttl2 > pttl + SLACK_MS:
                problems.append(f"{key}: TTL grew from {pttl} to {pttl2} ms")
            else:
                elapsed_ms = when[key][1] - snap.read_at[key][0]  # the most server time that can have passed
                if pttl2 < pttl - elapsed_ms - SLACK_MS:
                    problems.append(f"{key}: TTL fell from {pttl} to {pttl2} ms in at most {elapsed_ms:.0f} ms")
    extra = sorted(set(_scan(r, snap.prefix)) - set(snap.keys))
    problems += [f"{key}: appeared under the foreign prefix" for key in extra]
    return problems


def delete(r, prefix: str) -> int:
    keys = _scan(r, prefix)
    for start in range(0, len(keys), BATCH):
        r.unlink(*keys[start : start + BATCH])
    return len(keys)
