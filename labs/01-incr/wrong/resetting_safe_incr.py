"""Wrong: safe_incr "repairs" a value it cannot increment by overwriting it with SET, silently destroying
whatever the key held (and a list becomes a string), and reports success.

Caught by: test_safe_incr_reports_a_non_integer
"""

EDITS = [('''    except redis.exceptions.ResponseError as e:
        text = str(e)
        if text.startswith("WRONGTYPE"):
            return {"ok": False, "error": "wrong_type", "found": r.type(key)}
        if "overflow" in text:
            return {"ok": False, "error": "overflow", "found": r.get(key)}
        return {"ok": False, "error": "not_integer", "found": r.get(key)}
''', '''    except redis.exceptions.ResponseError:
        r.set(key, amount)
        return {"ok": True, "value": amount}
''')]
