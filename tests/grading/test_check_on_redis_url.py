"""``course check`` on a student's own server (REDIS_URL): scores there, and leaves no key behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import redis

from foundation.shared import REAL_URL, require_real_redis

COURSE = Path(sys.executable).with_name("course")


def _course_keys() -> set[str]:
    r = redis.Redis.from_url(REAL_URL, decode_responses=True, socket_timeout=5)
    return set(r.scan_iter(match="course:*", count=1000))


def test_check_on_redis_url_scores_and_cleans_up():
    require_real_redis()
    before = _course_keys()
    out = subprocess.run(
        [str(COURSE), "check", "00", "--solution", "--lang", "en"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, REDIS_URL=REAL_URL),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "REDIS_URL (" in out.stdout, out.stdout
    assert _course_keys() - before == set(), "course check left keys on the student's server"
