"""Where student processes come from: a clean interpreter that forks them on request.

Forking a ready interpreter is much faster than starting one per student process; the fork server
imports nothing of the grader's (``-I -S``), so a child inherits no grader state.  The child side
is ``_child.serve_forks``.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


def import_path() -> str:
    """sys.path entries for the child: redis_course's source folder and redis' site-packages."""
    import redis

    import redis_course

    entries: list[str] = []
    for mod in (redis_course, redis):
        p = str(Path(mod.__file__).resolve().parents[1])
        if p not in entries:
            entries.append(p)
    return ":".join(entries)


def python_paths() -> list[str]:
    """What the child's interpreter must be able to read (kept visible inside its mount namespace)."""
    paths = [sys.base_prefix, sys.prefix, *import_path().split(":")]
    exe = os.path.realpath(sys.executable)
    paths.append(os.path.dirname(exe))
    out: list[str] = []
    for p in map(os.path.realpath, paths):
        if p not in out:
            out.append(p)
    return out


FORK_BOOT = ("import sys; sys.path[:0] = sys.argv[1].split(':'); "
             "from redis_course.labs._child import serve_forks; serve_forks(int(sys.argv[2]))")


class ForkServer:
    """A clean interpreter that forks student processes on request (see ``_child.serve_forks``)."""

    def __init__(self, fd: int | None = None) -> None:
        """Start a fork server, or (``fd``) talk to one started by another process (a grading worker)."""
        self._lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        if fd is not None:
            self._sock = socket.socket(fileno=fd)
            return
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", FORK_BOOT, import_path(), str(theirs.fileno())],
                                     pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        theirs.close()

    def spawn(self, cfg: dict, fds: list[int]) -> int:
        with self._lock:
            socket.send_fds(self._sock, [json.dumps(cfg).encode()], fds)
            self._sock.settimeout(30)
            reply = self._sock.recv(1 << 12)
        if not reply:
            raise RuntimeError("the fork server stopped")
        return int(json.loads(reply)["pid"])

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


class _ForkedProcess:
    """The little of Popen's interface the sandbox needs, for a process forked by the fork server."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                self.returncode = -1
            except PermissionError:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("student process", timeout or 0)
            time.sleep(0.005)
        return self.returncode  # type: ignore[return-value]

    def send_signal(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass
