"""One breaker for the whole process: no answer from one server opens it for the calls on every server.

Caught by: test_no_answer_from_one_server_opens_no_breaker_for_another_hidden
"""

EDITS = [('breaker = _BREAKER.setdefault(id(r), {"open_until": 0.0})',
          'breaker = _BREAKER.setdefault("every server", {"open_until": 0.0})')]
