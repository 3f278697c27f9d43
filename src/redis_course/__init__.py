"""Tooling for the course "Redis counters, atomicity and rate limiting".

In a notebook or a lab::

    from redis_course import connect
    r = connect(verbose=True)      # fakeredis, or the server in REDIS_URL
    r.incr(r.key("views"))         # every key under this run's prefix
"""
from .backend import CourseError, ServerWideCommandRefused, connect
from .messages import msg

__all__ = ["CourseError", "ServerWideCommandRefused", "connect", "needs_real_redis"]
__version__ = "0.1.0"


def needs_real_redis(r, what: str) -> bool:
    """True on a real server.  On fakeredis, print why the cell is skipped (in the reader's language)."""
    if getattr(r, "is_fake", False):
        print(msg("needs_real_redis", what=what))
        return False
    return True
