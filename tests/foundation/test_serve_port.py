"""``serve`` on a busy port says so at once, before building the site."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time


def test_serve_on_a_busy_port_stops_before_building(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.monotonic()
        res = subprocess.run(
            [sys.executable, "-m", "redis_course.cli", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ, COURSE_LANG="en", COURSE_CONSOLE="0"),
        )
        took = time.monotonic() - started
    assert res.returncode != 0 and f"Port {port} on 127.0.0.1 is busy" in res.stderr, res.stdout + res.stderr
    assert "Building" not in res.stdout + res.stderr and "INFO" not in res.stderr, "it built the site first"
    assert took < 30, f"{took:.0f} s before saying so"
