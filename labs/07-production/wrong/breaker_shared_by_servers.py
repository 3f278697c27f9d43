"""One breaker for the whole process: no answer from one server opens it for the calls on every server."""

EDITS = [('breaker = _BREAKER.setdefault(id(r), {"open_until": 0.0})',
          'breaker = _BREAKER.setdefault("every server", {"open_until": 0.0})')]
