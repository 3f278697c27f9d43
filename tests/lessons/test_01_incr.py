"""Lesson 01 (INCR and its family): the facts the page states in tables, pinned on both backends.

The page's redis-cli transcripts are run by tests/foundation/test_transcripts.py and the notebook by
tests/foundation/test_notebooks.py; these tests hold the tables, including the rows where Redis 7.0
and fakeredis answer differently, so the page is corrected when either backend changes.
"""

from __future__ import annotations

import pytest
import redis as redis_py

MAX = 2**63 - 1


def error_of(call, *args, **kwargs) -> str:
    with pytest.raises(redis_py.exceptions.ResponseError) as info:
        call(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize("text", ["abc", "", " 1", "1 ", "007", "+1", "-0", "1.5", "1e3", "9223372036854775808"])
def test_only_canonical_64_bit_integers_are_incremented(r, text):
    k = r.key("n")
    r.set(k, text)
    assert error_of(r.incr, k) == "value is not an integer or out of range"
    assert r.get(k) == text


@pytest.mark.parametrize("text, after", [("41", 42), ("-7", -6), ("0", 1), (str(MAX - 1), MAX)])
def test_canonical_integers_are_incremented(r, text, after):
    k = r.key("n")
    r.set(k, text)
    assert r.incr(k) == after


def test_errors_as_redis_py_reports_them(r):
    k = r.key("n")
    r.set(k, MAX)
    assert error_of(r.incr, k) == "increment or decrement would overflow"
    assert r.get(k) == str(MAX)
    r.rpush(r.key("queue"), "job1")
    assert error_of(r.incr, r.key("queue")) == "WRONGTYPE Operation against a key holding the wrong kind of value"
    for bad in (None, True):
        with pytest.raises(redis_py.exceptions.DataError):
            r.incrby(k, bad)
    assert error_of(r.incrby, k, 1.5) == "value is not an integer or out of range"


def test_hash_counters_have_their_own_error_text(r):
    h = r.key("post", 17)
    r.hset(h, "rating", "4.5")
    assert error_of(r.hincrby, h, "rating", 1) == "hash value is not an integer"
    r.hset(h, "max", MAX)
    assert error_of(r.hincrby, h, "max", 1) == "increment or decrement would overflow"


def test_read_and_reset_commands_and_ttl(r):
    k = r.key("hits")
    assert r.getset(k, 0) is None and r.get(k) == "0"
    r.set(k, 5, ex=100)
    assert r.getset(k, 0) == "5" and r.ttl(k) == -1  # GETSET drops the TTL
    r.set(k, 5, ex=100)
    assert r.set(k, 0, get=True) == "5" and r.ttl(k) == -1  # so does a plain SET ... GET
    r.set(k, 5, ex=100)
    assert r.set(k, 0, get=True, keepttl=True) == "5" and r.ttl(k) > 0
    assert r.getdel(k) == "0" and r.exists(k) == 0 and r.getdel(k) is None
    r.rpush(r.key("queue"), "a")
    for call in (r.getset, lambda key, v: r.set(key, v, get=True)):
        assert error_of(call, r.key("queue"), 0).startswith("WRONGTYPE")
    assert error_of(r.getdel, r.key("queue")).startswith("WRONGTYPE")


# The table "Floating-point traps" of the page: what each backend stores.
FLOAT_ROWS = {
    "0.1 then 0.2": {"redis": "0.3", "fakeredis": "0.30000000000000004"},
    "1000 then 0.1": {"redis": "1000.09999999999999998", "fakeredis": "1000.10000000000002274"},
    "ten times 0.1": {"redis": "1", "fakeredis": "0.99999999999999989"},
}


def _float_row(r, row: str) -> str:
    k = r.key("x")
    if row == "0.1 then 0.2":
        r.incrbyfloat(k, 0.1)
        r.incrbyfloat(k, 0.2)
    elif row == "1000 then 0.1":
        r.set(k, 1000)
        r.incrbyfloat(k, 0.1)
    else:
        for _ in range(10):
            r.incrbyfloat(k, 0.1)
    return r.get(k)


@pytest.mark.parametrize("row", list(FLOAT_ROWS))
def test_incrbyfloat_rounding_table(r, row):
    assert _float_row(r, row) == FLOAT_ROWS[row]["fakeredis" if r.is_fake else "redis"]


def test_incrbyfloat_parsing_table(r):
    huge, hexa, h = r.key("huge"), r.key("hexa"), r.key("h")
    if r.is_fake:
        assert error_of(r.incrbyfloat, huge, "1e400") == "value is not a valid float"
        assert error_of(r.incrbyfloat, hexa, "0x10") == "value is not a valid float"
        assert error_of(r.hincrbyfloat, h, "f", "inf") == "increment would produce NaN or Infinity"
    else:
        assert r.incrbyfloat(huge, "1e400") == float("inf")  # the client cannot parse 401 digits into a double
        assert len(r.get(huge)) == 401
        assert r.incrbyfloat(hexa, "0x10") == 16.0
        assert error_of(r.hincrbyfloat, h, "f", "inf") == "value is NaN or Infinity"
    for bad, text in [("inf", "increment would produce NaN or Infinity"), ("nan", "value is not a valid float")]:
        assert error_of(r.incrbyfloat, r.key("g"), bad) == text


def test_decrby_most_negative_table(r):
    k = r.key("m")
    if r.is_fake:
        assert error_of(r.decrby, k, -(2**63)) == "increment or decrement would overflow"
        r.set(k, -(2**63))
        assert r.decrby(k, -(2**63)) == 0
    else:
        assert error_of(r.decrby, k, -(2**63)) == "decrement would overflow"
        r.set(k, -(2**63))
        assert error_of(r.decrby, k, -(2**63)) == "decrement would overflow"


@pytest.mark.parametrize(
    "value, encoding",
    [
        ("10", "int"),
        ("-5", "int"),
        (str(MAX), "int"),
        ("007", "embstr"),
        ("10.5", "embstr"),
        ("123456789012345678901", "embstr"),
    ],
)
def test_object_encoding_table(r, value, encoding):
    k = r.key("e")
    r.set(k, value)
    if r.is_fake:
        with pytest.raises(redis_py.exceptions.ResponseError, match="unknown command"):
            r.object("encoding", k)
    else:
        assert r.object("encoding", k) == encoding


def test_object_encoding_after_incr_append_and_float(r):
    if r.is_fake:
        pytest.skip("fakeredis has no OBJECT (the previous test pins that)")
    k = r.key("e")
    r.incr(k)
    assert r.object("encoding", k) == "int"
    r.append(k, "2")
    assert r.object("encoding", k) == "raw"
    r.incr(k)
    assert r.object("encoding", k) == "int"
    r.incrbyfloat(k, 0.5)
    r.incrbyfloat(k, 0.5)
    assert r.get(k) == "14" and r.object("encoding", k) == "embstr"
