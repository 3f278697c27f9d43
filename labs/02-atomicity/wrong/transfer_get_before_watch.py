"""Wrong: transfer reads the balance with r.get before calling WATCH, so a write between the GET and the WATCH goes unnoticed.

Caught by: test_a_withdrawal_right_after_the_read_is_not_missed_hidden
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
    while True:
        balance = int(r.get(src_key) or 0)
        if balance < amount:
            return False
        with r.pipeline() as pipe:
            try:
                pipe.watch(src_key)
                pipe.multi()
                pipe.decrby(src_key, amount)
                pipe.incrby(dst_key, amount)
                pipe.execute()
                return True
            except redis.WatchError:
                continue
