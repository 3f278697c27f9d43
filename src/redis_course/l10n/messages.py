"""Messages for people, in the reader's language, by a short id.

The texts live in the gettext catalogs (:mod:`redis_course.l10n`): English here, Russian and Chinese in
``locale/<lang>/LC_MESSAGES/course.po``.  The language comes from ``COURSE_LANG`` (set by
``course jupyter --lang`` and ``course check --lang``), then from the locale, and falls back to English.
Each message is one sentence that says what is wrong and what to do.
"""

from __future__ import annotations

from . import N_, _, current_lang
from ..paths import LANGS

__all__ = ["LANGS", "MESSAGES", "current_lang", "msg"]

MESSAGES: dict[str, str] = {
    "bad_url": N_(
        "REDIS_URL={url!r} is not a Redis URL ({detail}); use redis://HOST:PORT/DB, rediss://... or unix:///path/to/redis.sock, or unset REDIS_URL to use the built-in fakeredis."
    ),
    "refused": N_(
        "Cannot connect to Redis at {where}: {detail}. Start the server or fix REDIS_URL, or unset REDIS_URL to use the built-in fakeredis."
    ),
    "timeout": N_(
        "Redis at {where} did not answer within {seconds} s; check the host and port in REDIS_URL (a firewall may be dropping packets)."
    ),
    "auth": N_(
        "Redis at {where} refused the credentials: {detail}. Put the right user and password in REDIS_URL (redis://user:password@host:port/0)."
    ),
    "refused_command": N_(
        "The course refuses to run {command} on a Redis server it did not start ({where}): it could destroy data that is not the course's. Use a private server (redis_course.private_redis) for this demo."
    ),
    "no_lua": N_(
        "fakeredis cannot run Lua scripts because the `lupa` package is missing; run `python3 run.py doctor` or reinstall with `pip install 'fakeredis[lua]'`."
    ),
    "no_redis_server": N_(
        "This needs the `redis-server` program to start a private Redis, and it is not installed; on Debian or Ubuntu run `sudo apt install redis-server` (on macOS `brew install redis`). The rest of the lesson works without it."
    ),
    "server_start_failed": N_("The private redis-server on port {port} did not start: {detail}"),
    "needs_real_redis": N_(
        "⏭ This cell needs a real Redis server: {what} is not available on fakeredis. Set REDIS_URL (for example redis://127.0.0.1:6379/0) and run it again to see the output."
    ),
}


def msg(msg_id: str, lang: str | None = None, **fields: object) -> str:
    """Return message ``msg_id`` in ``lang`` (default: the reader's language), filled with ``fields``."""
    return _(MESSAGES[msg_id], lang=lang, **fields)
