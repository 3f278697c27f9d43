"""Wrong: transfer (WATCH version) reads the balance with float() and writes the new source balance back with SET, storing strings like '1150.0'.

Caught by: test_transfer_moves_money
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
        while True:
            try:
                pipe.watch(src_key, dst_key)
                balance = float(pipe.get(src_key) or 0)
                target = float(pipe.get(dst_key) or 0)
                if balance < amount:
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.set(src_key, balance - amount)
                pipe.set(dst_key, target + amount)
                pipe.execute()
                return True
            except redis.WatchError:
                continue
