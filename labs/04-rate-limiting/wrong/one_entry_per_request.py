"""Wrong: the sliding log records a request, not its units.

sliding_window checks the units in the window plus the cost against every limit, but then adds a
single entry for the request whatever its cost: a request of cost 2 is remembered as 1, so twice as
many get in.

Caught by: test_sliding_window_under_sixteen_processes_hidden
"""

EDITS = [("""    for first = 1, cost, 1000 do
      local add = {}
      for unit = first, math.min(cost, first + 999) do
        add[#add + 1], add[#add + 2] = now, request_id .. ':' .. unit
      end
      redis.call('ZADD', KEYS[1], unpack(add))
    end
""", """    redis.call('ZADD', KEYS[1], now, request_id)
""")]
