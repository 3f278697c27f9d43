"""Tooling for the course "Redis counters, atomicity and rate limiting".

In a notebook or a lab::

    from redis_course import connect
    r = connect(verbose=True)      # fakeredis, or the server in REDIS_URL
    r.incr(r.key("views"))         # every key under this run's prefix

and, for a demo that needs a server of its own (``FLUSHALL``, ``CONFIG SET``, a crash)::

    from redis_course import private_redis, redis_server_binary
    if redis_server_binary():
        with private_redis() as server:
            r = server.client()
"""

from .core.backend import CourseError, ServerWideCommandRefused, connect
from .core.servers import private_redis, redis_server_binary
from .l10n.messages import msg

__all__ = [
    "CourseError",
    "ServerWideCommandRefused",
    "connect",
    "needs_real_redis",
    "private_redis",
    "redis_server_binary",
]
__version__ = "0.1.0"


def needs_real_redis(r, what: str) -> bool:
    """True on a real server.  On fakeredis, print why the cell is skipped (in the reader's language)."""
    if getattr(r, "is_fake", False):
        print(msg("needs_real_redis", what=what))
        return False
    return True
