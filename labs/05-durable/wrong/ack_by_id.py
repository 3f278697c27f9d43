"""Wrong: ack and fail look only at the task id, not at the claim: a worker whose lease ran out
(and whose task another worker now holds) still acknowledges or fails it, so the task is finished
or rescheduled behind the back of the claim that owns it.

Caught by: test_a_task_whose_lease_ends_comes_back_and_the_old_claim_is_stale
"""


EDITS = [("""    if not redis.call('ZSCORE', processing, id) then return 'stale' end
    if redis.call('HGET', attempts, id) ~= attempt then return 'stale' end
""", ""),
         ("""    local leased = redis.call('ZSCORE', processing, id)
    if not leased or redis.call('HGET', attempts, id) ~= attempt then return 'stale' end
""", "")]
