"""Lesson 02: two scripts that show what "atomic" does and does not promise.

:data:`MOVE` writes, then fails half-way: Redis keeps its first write (no rollback, as in
MULTI/EXEC).  :data:`TRANSFER` checks everything that could fail before its first write, so it
either writes both keys or nothing.  The notebook and ``tests/lessons/test_02_atomicity.py`` run
both on fakeredis and on a real server.
"""

from __future__ import annotations

#: DECRBY KEYS[1], then INCRBY KEYS[2] by ARGV[1]; fails half-way when KEYS[2] is not an integer.
#: Two O(1) commands in one EVAL.
# --8<-- [start:move]
MOVE = """
-- MOVE. KEYS[1]: from, KEYS[2]: to; ARGV[1]: amount
redis.call('DECRBY', KEYS[1], ARGV[1])   -- runs, and stays done
redis.call('INCRBY', KEYS[2], ARGV[1])   -- fails when KEYS[2] does not hold an integer
"""
# --8<-- [end:move]

#: Move ARGV[1] from KEYS[1] to KEYS[2] only if every check passes; -1 when the balance is short.
#: GET, GET, then DECRBY and INCRBY: O(1), one EVAL.
# --8<-- [start:transfer]
TRANSFER = """
-- TRANSFER. KEYS[1]: from, KEYS[2]: to; ARGV[1]: amount
local function is_int(s)  -- canonical, at most 15 digits: INCRBY takes it, no sum overflows
  local digits = string.match(s, '^-?([1-9]%d*)$')
  return s == '0' or (digits ~= nil and #digits <= 15)
end
if not is_int(ARGV[1]) or tonumber(ARGV[1]) <= 0 then
  return redis.error_reply('amount must be a positive integer')
end
local from = redis.call('GET', KEYS[1]) or '0'
local to = redis.call('GET', KEYS[2]) or '0'
if not is_int(from) or not is_int(to) then
  return redis.error_reply('both keys must hold integers')
end
if tonumber(from) < tonumber(ARGV[1]) then
  return -1
end
redis.call('DECRBY', KEYS[1], ARGV[1])    -- the first write comes after the last check
return redis.call('INCRBY', KEYS[2], ARGV[1])
"""
# --8<-- [end:transfer]
