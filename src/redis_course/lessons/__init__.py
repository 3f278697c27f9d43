"""Code that a lesson teaches and its notebook, tests and benchmarks import, written once.

A lesson's notebook shows this code with :func:`show` (the source, not a copy) and runs it.  A
page includes it too: the lines between ``# --8<-- [start:NAME]`` and ``# --8<-- [end:NAME]`` in a
module are what a page's ``--8<-- "src/redis_course/lessons/MODULE.py:NAME"`` line shows
(pymdownx.snippets), so renaming or removing a section breaks the strict build of the site.
"""

from __future__ import annotations

import inspect


def show(obj) -> None:
    """Print the source of a function, class or script constant exactly as the course runs it."""
    if isinstance(obj, str):
        print(obj.strip("\n"))
        return
    print(inspect.getsource(obj).rstrip("\n"))
