"""``course doctor``: what works on this machine, in one screen, and what each missing piece means."""
from __future__ import annotations

import os
import shutil
import sys

from .backend import CourseError, connect, lua_available

OK, WARN, BAD = "ok", "--", "!!"


def checks() -> list[tuple[str, str, str, str]]:
    """(status, what, found, what it means) for each piece the course can use."""
    rows: list[tuple[str, str, str, str]] = []
    py = sys.version.split()[0]
    rows.append((OK if sys.version_info >= (3, 11) else BAD, "Python", py,
                 "" if sys.version_info >= (3, 11) else "the course needs Python 3.11 or newer"))

    try:
        from jupyter_client.kernelspec import KernelSpecManager

        specs = KernelSpecManager().find_kernel_specs()
        rows.append((OK if "python3" in specs else BAD, "Jupyter kernel", "python3" if "python3" in specs else "none",
                     "" if "python3" in specs else "notebooks cannot run: reinstall with `python3 run.py doctor`"))
    except Exception as exc:  # pragma: no cover - only on a broken install
        rows.append((BAD, "Jupyter kernel", f"error: {exc}", "notebooks cannot run"))

    try:
        import fakeredis

        r = connect(url="")
        r.incr(r.key("doctor"))
        lua = lua_available() and r.eval("return 1 + 1", 0) == 2
        r.cleanup()
        rows.append((OK if lua else WARN, "fakeredis", f"{fakeredis.__version__}, Lua {'yes' if lua else 'no'}",
                     "" if lua else "Lua scripts (lessons 02, 04, 05) need `pip install lupa`"))
    except Exception as exc:
        rows.append((BAD, "fakeredis", f"error: {exc}", "nothing runs without a Redis: reinstall the course"))

    url = os.environ.get("REDIS_URL")
    if url:
        try:
            r = connect(url)
            rows.append((OK, "REDIS_URL", f"{r.where}: Redis {r.server_version()}",
                         "notebooks and labs run on this server, under their own key prefix"))
        except CourseError as exc:
            rows.append((BAD, "REDIS_URL", url, str(exc)))
    else:
        rows.append((WARN, "REDIS_URL", "not set",
                     "everything runs on fakeredis; cells that need a real server (OBJECT, MEMORY, INFO) say so"))

    from .servers import redis_server_binary, redis_server_version

    binary = redis_server_binary()
    rows.append((OK if binary else WARN, "redis-server", f"{binary} ({redis_server_version()})" if binary else "not found",
                 "private servers for persistence, cluster and grading" if binary else
                 "persistence (lesson 05) and cluster (lesson 06) demos are skipped; grading falls back to fakeredis"))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    rows.append((OK if chromium else WARN, "chromium", chromium or "not found",
                 "" if chromium else "only the browser tests of the site need it (`apt install chromium`)"))
    return rows


def run_doctor() -> int:
    rows = checks()
    w1 = max(len(r[1]) for r in rows)
    w2 = min(48, max(len(r[2]) for r in rows))
    print("course doctor: what works on this machine\n")
    for status, what, found, meaning in rows:
        print(f" [{status}] {what:<{w1}}  {found:<{w2}}  {meaning}")
    bad = [r for r in rows if r[0] == BAD]
    print("\n" + ("Everything the course needs is here." if not bad else
                  f"{len(bad)} problem(s) above: fix them, then run `python3 run.py doctor` again."))
    return 1 if bad else 0
