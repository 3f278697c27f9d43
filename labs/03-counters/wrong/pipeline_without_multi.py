"""record_view sends its commands in a pipeline without MULTI, which Redis does not run as one unit."""

EDITS = [('    with r.pipeline(transaction=True) as p:\n        p.incr(counter)\n',
          '    with r.pipeline(transaction=False) as p:\n        p.incr(counter)\n')]
