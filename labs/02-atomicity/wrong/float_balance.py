"""Wrong: atomic (WATCH with retries), but the balance is handled as a float.

The check-and-set is correct under concurrency, but balances are computed with ``float`` and
written back as "70.0", which INCRBY and DECRBY then refuse, and fractional amounts such as 2.5
are accepted although money is whole cents.  Tickets are sold correctly.

Caught by: test_transfer_moves_money
"""
import redis


def transfer(r, src: str, dst: str, amount) -> bool:
    amount = float(amount)
    if amount <= 0:
        raise ValueError("amount must be positive")
    if src == dst:
        raise ValueError("src and dst must be different accounts")
    src_key, dst_key = r.key("account", src), r.key("account", dst)
    while True:
        with r.pipeline() as pipe:
            try:
                pipe.watch(src_key, dst_key)
                src_balance = float(pipe.get(src_key) or 0)
                dst_balance = float(pipe.get(dst_key) or 0)
                if src_balance < amount:
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.set(src_key, src_balance - amount)
                pipe.set(dst_key, dst_balance + amount)
                pipe.execute()
                return True
            except redis.WatchError:
                continue
