"""safe_incr predicts an overflow with GET before INCRBY and trusts it, so an overflow caused by a change in
between is reported as not_integer.

Caught by: test_safe_incr_near_the_limit_under_contention_hidden
"""

EDITS = [('''    try:
        return {"ok": True, "value": r.incrby(key, amount)}
''', '''    try:
        current = r.get(key)
    except redis.exceptions.ResponseError:
        current = None
    if (current is not None and current.lstrip("-").isdigit() and str(int(current)) == current
            and -MAX_INT64 - 1 <= int(current) <= MAX_INT64):
        if not -MAX_INT64 - 1 <= int(current) + amount <= MAX_INT64:
            return {"ok": False, "error": "overflow", "found": current}
    try:
        return {"ok": True, "value": r.incrby(key, amount)}
'''), ('''        if "overflow" in text:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
''', "")]
