"""The foreign-key checker itself must be able to fail (the session-wide check is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from foundation.shared import require_real_redis
from foundation import foreign_keys
from redis_course import connect


@pytest.fixture
def real():
    url = require_real_redis()
    prefix = foreign_keys.new_prefix()
    r = connect(url, prefix=prefix, decode_responses=False)
    yield r, prefix
    foreign_keys.delete(r, prefix)


@pytest.mark.real_redis
def test_untouched_keys_pass(real):
    r, prefix = real
    snap = foreign_keys.seed(r, prefix, count=10)
    assert len(snap.keys) == 10
    assert {kind for kind, _, _ in snap.keys.values()} == set(foreign_keys.KINDS)
    assert sum(pttl > 0 for _, _, pttl in snap.keys.values()) == 2  # keys 0 and 5
    assert foreign_keys.verify(r, snap) == []


@pytest.mark.real_redis
def test_every_kind_of_change_is_reported(real):
    r, prefix = real
    snap = foreign_keys.seed(r, prefix, count=10)
    k = [f"{prefix}{i:05d}" for i in range(10)]
    r.hset(k[1], "a", "changed")  # a hash value
    r.delete(k[2])  # a list, gone
    r.pexpire(k[0], foreign_keys.TTL_MS * 2)  # a TTL that grew
    r.persist(k[5])  # a TTL removed
    r.expire(k[3], 3600)  # a TTL added
    r.delete(k[4])  # a string that became a list
    r.rpush(k[4], "x")
    r.set(prefix + "new", 1)  # a key that appeared
    problems = foreign_keys.verify(r, snap)
    expected_starts = [
        f"{k[1]}: value changed",
        f"{k[2]}: deleted (was a list)",
        f"{k[0]}: TTL grew from {snap.keys[k[0]][2]} to ",
        f"{k[5]}: lost its TTL (had {snap.keys[k[5]][2]} ms)",
        f"{k[3]}: gained a TTL (",
        f"{k[4]}: type string became list",
        f"{prefix}new: appeared under the foreign prefix",
    ]
    assert len(problems) == len(expected_starts), problems
    for start in expected_starts:
        assert sum(p.startswith(start) for p in problems) == 1, (start, problems)
    assert not any(p.startswith((k[6], k[7], k[8], k[9])) for p in problems)


@pytest.mark.real_redis
def test_a_ttl_is_judged_by_the_servers_clock(real, monkeypatch):
    """A slow read-back (a loaded machine) is no change; a TTL cut short by 2 s is one."""
    import time

    r, prefix = real
    monkeypatch.setattr(foreign_keys, "BATCH", 2)  # many round trips: the reads take a while
    snap = foreign_keys.seed(r, prefix, count=10)
    time.sleep(0.3)
    assert foreign_keys.verify(r, snap) == []
    key = f"{prefix}00005"
    r.pexpire(key, snap.keys[key][2] - 2000)
    problems = foreign_keys.verify(r, snap)
    assert len(problems) == 1 and problems[0].startswith(f"{key}: TTL fell from "), problems
