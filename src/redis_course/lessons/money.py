"""Money in integer cents: check and take in one step, and why "DECRBY, then give back" is not enough.

:func:`withdraw_decr_first` is the common pattern, written as steps (a generator, as the limiters
of lesson 04 are) so that a demonstration can stop it between its commands, as a crash would, or
interleave two clients.  :func:`withdraw` is the default this course teaches for money: one Lua
script that reads, checks and decrements.  :func:`withdraw_once` adds a request id, so that a
retried call (redis-py retries after a timeout by itself) takes the money once.
"""

from __future__ import annotations

from typing import Generator

Steps = Generator[str, None, bool]

#: KEYS[1]: the balance in cents; ARGV[1]: the amount.  The new balance, or -1 when it does not
#: cover the amount (nothing is written then).  GET + DECRBY in one EVALSHA: O(1).
# --8<-- [start:withdraw]
WITHDRAW = """
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if balance < amount then
  return -1
end
return redis.call('DECRBY', KEYS[1], amount)
"""
# --8<-- [end:withdraw]

#: KEYS[1]: the balance, KEYS[2]: this request's marker; ARGV[1]: amount, ARGV[2]: marker TTL (s).
#: The first call decides and records its answer in the marker; a retry gets the same answer.
# --8<-- [start:withdraw-once]
WITHDRAW_ONCE = """
local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)
end
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
local result = -1
if balance >= tonumber(ARGV[1]) then
  result = redis.call('DECRBY', KEYS[1], ARGV[1])
end
redis.call('SET', KEYS[2], result, 'EX', ARGV[2])
return result
"""
# --8<-- [end:withdraw-once]


def _cents(amount: int) -> int:
    if type(amount) is not int or amount < 1:  # type(): True is an int to isinstance, not an amount
        raise ValueError(f"money moves in a positive whole number of cents; got {amount!r}")
    return amount


def withdraw(r, key: str, cents: int) -> int:
    """Take ``cents`` from the balance at ``key`` if it covers them: the new balance, or -1.

    One EVALSHA (GET, compare, DECRBY inside Redis): nothing runs between the check and the
    decrement, nothing is written on a refusal, and there is no second step a crash could skip.
    """
    return r.register_script(WITHDRAW)(keys=[key], args=[_cents(cents)])


def withdraw_once(r, key: str, cents: int, request_id: str, ttl_s: int = 86400) -> int:
    """:func:`withdraw`, at most once per ``request_id``: a retry answers what the first call did.

    The marker ``<key>:req:<request_id>`` is written in the same script as the DECRBY, so the two
    cannot be separated.  One EVALSHA, O(1).
    """
    marker = f"{key}:req:{request_id}"
    return r.register_script(WITHDRAW_ONCE)(keys=[key, marker], args=[_cents(cents), ttl_s])


def withdraw_decr_first(r, key: str, cents: int) -> Steps:
    """The common pattern, for comparison: DECRBY, and if the result is negative, INCRBY it back.

    Two round trips when refused.  A process that dies between them leaves the money taken; while
    the give-back is on its way, the balance looks lower than it is and valid withdrawals of other
    clients are refused.
    """
    balance = r.decrby(key, _cents(cents))
    yield f"DECRBY {r.unprefixed(key)} {cents} -> {balance}"
    if balance >= 0:
        return True
    back = r.incrby(key, cents)
    yield f"INCRBY {r.unprefixed(key)} {cents} -> {back}"
    return False
