"""The fixed window keeps one key for every client, so clients use up each other's limit."""

EDITS = [('return _decide(r, script, r.key("rl", "fixed", client_id)',
          'return _decide(r, script, r.key("rl", "fixed")')]
