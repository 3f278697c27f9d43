"""Wrong: acquire sets the sorted set's PEXPIRE to its own lease every time, so a shorter lease shortens the key's life below the longest lease it holds.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""

EDITS = [("    redis.call('ZADD', KEYS[1], now + lease, ARGV[3])\n"
          "    if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end\n",
          "    redis.call('ZADD', KEYS[1], now + lease, ARGV[3])\n"
          "    redis.call('PEXPIRE', KEYS[1], lease)\n")]
