"""Stopping `python3 run.py serve` or `python3 run.py jupyter` by its process id (SIGTERM, as a process
manager or an IDE does) stops everything it started and frees the port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from redis_course import paths


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("command", [["serve", "--no-build"], ["jupyter", "--no-browser"]], ids=["serve", "jupyter"])
def test_sigterm_to_run_py_stops_everything_and_frees_the_port(command):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(paths.ROOT / "run.py"), *command, "--port", str(port)],
        cwd=paths.ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while not _answers(port):
            assert proc.poll() is None, f"run.py {command[0]} ended before it served (exit {proc.returncode})"
            assert time.monotonic() < deadline, f"run.py {command[0]} did not listen on {port} within 180 s"
            time.sleep(0.5)
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert children, "run.py runs the command in a child process"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 15
        while (_answers(port) or _group_alive(int(children[0]))) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _answers(port), f"port {port} still answers after run.py was stopped"
        assert not _group_alive(int(children[0])), "a process run.py started is still running"
    finally:
        if proc.poll() is None:
            proc.kill()
