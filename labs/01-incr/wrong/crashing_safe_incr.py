"""Wrong: safe_incr is not safe. It calls INCRBY and lets redis.exceptions.ResponseError escape, so a
non-integer value, an overflow or a key of another type crashes the caller instead of being reported.

Caught by: test_safe_incr_reports_a_non_integer
"""

EDITS = [('''    try:
        return {"ok": True, "value": r.incrby(key, amount)}
    except redis.exceptions.ResponseError as e:
        text = str(e)
        if text.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        if "overflow" in text:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
''', '''    return {"ok": True, "value": r.incrby(key, amount)}
''')]
