"""Wrong: last_7_days steps back from local midnight (date.fromtimestamp) to find the seven days, mixing the machine's date into UTC keys.

Caught by: test_random_call_sequences_follow_the_contract_hidden
"""

from datetime import datetime, timezone


def last_7_days(r, page: str, now: float) -> list:
    from datetime import date, timedelta
    today = date.fromtimestamp(now)
    keys = [r.key("views", page, (today - timedelta(days=back)).isoformat()) for back in range(6, -1, -1)]
    return [int(v) if v is not None else 0 for v in r.mget(keys)]
