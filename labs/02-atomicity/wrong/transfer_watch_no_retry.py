"""Wrong: transfer uses WATCH/MULTI/EXEC but answers False when EXEC fails with WatchError instead of retrying.

Caught by: test_a_deposit_right_after_the_read_does_not_refuse_the_transfer_hidden
"""

import redis


def _check_amount(amount):
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive int number of cents")


def transfer(r, src: str, dst: str, amount: int) -> bool:
    _check_amount(amount)
    if src == dst:
        raise ValueError("cannot transfer to the same account")
    src_key, dst_key = r.key("account", src), r.key("account", dst)
    with r.pipeline() as pipe:
        try:
            pipe.watch(src_key)
            balance = int(pipe.get(src_key) or 0)
            if balance < amount:
                pipe.unwatch()
                return False
            pipe.multi()
            pipe.decrby(src_key, amount)
            pipe.incrby(dst_key, amount)
            pipe.execute()
            return True
        except redis.WatchError:
            return False
