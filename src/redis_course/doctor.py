"""``course doctor``: what works on this machine, in one screen, and what each missing piece means."""

from __future__ import annotations

import os
import shutil
import sys

from .core.backend import CourseError, connect, lua_available
from .l10n import _, ngettext
from .tables import pad, width

OK, WARN, BAD = "ok", "--", "!!"


def checks() -> list[tuple[str, str, str, str]]:
    """(status, what, found, what it means) for each piece the course can use."""
    rows: list[tuple[str, str, str, str]] = []
    py = sys.version.split()[0]
    rows.append(
        (
            OK if sys.version_info >= (3, 11) else BAD,
            "Python",
            py,
            "" if sys.version_info >= (3, 11) else _("the course needs Python 3.11 or newer"),
        )
    )

    try:
        from jupyter_client.kernelspec import KernelSpecManager

        specs = KernelSpecManager().find_kernel_specs()
        rows.append(
            (
                OK if "python3" in specs else BAD,
                _("Jupyter kernel"),
                "python3" if "python3" in specs else _("none"),
                "" if "python3" in specs else _("notebooks cannot run: reinstall with `python3 run.py doctor`"),
            )
        )
    except Exception as exc:  # pragma: no cover - only on a broken install
        rows.append((BAD, _("Jupyter kernel"), _("error: {detail}", detail=exc), _("notebooks cannot run")))

    try:
        import fakeredis

        r = connect(url="")
        r.incr(r.key("doctor"))
        lua = lua_available() and r.eval("return 1 + 1", 0) == 2
        r.cleanup()
        rows.append(
            (
                OK if lua else WARN,
                "fakeredis",
                _("{version}, Lua: yes", version=fakeredis.__version__)
                if lua
                else _("{version}, Lua: no", version=fakeredis.__version__),
                "" if lua else _("Lua scripts (lessons 02, 04, 05) need `pip install lupa`"),
            )
        )
    except Exception as exc:
        rows.append(
            (
                BAD,
                "fakeredis",
                _("error: {detail}", detail=exc),
                _("nothing runs without a Redis: reinstall the course"),
            )
        )

    url = os.environ.get("REDIS_URL")
    if url:
        try:
            r = connect(url)
            rows.append(
                (
                    OK,
                    "REDIS_URL",
                    f"{r.where}: Redis {r.server_version()}",
                    _("notebooks and labs run on this server, under their own key prefix"),
                )
            )
        except CourseError as exc:
            rows.append((BAD, "REDIS_URL", url, str(exc)))
    else:
        rows.append(
            (
                WARN,
                "REDIS_URL",
                _("not set"),
                _("everything runs on fakeredis; cells that need a real server (OBJECT, MEMORY, INFO) say so"),
            )
        )

    from .core.servers import redis_server_binary, redis_server_version

    binary = redis_server_binary()
    rows.append(
        (
            OK if binary else WARN,
            "redis-server",
            f"{binary} ({redis_server_version()})" if binary else _("not found"),
            _("private servers for persistence, cluster and grading")
            if binary
            else _(
                "persistence (lesson 05) and cluster (lesson 06) demos are skipped; grading falls back to fakeredis"
            ),
        )
    )
    try:
        from .labs.grading.grade import describe_isolation, isolation_mode

        mode = isolation_mode()
        rows.append(
            (
                OK if mode != "none" else WARN,
                _("grading isolation"),
                describe_isolation(mode),
                _("what `grade` and the Gradescope autograder use for student code here")
                if mode != "none"
                else _(
                    "`grade` refuses to run without --no-isolation; install bubblewrap (`apt install bubblewrap`) "
                    "or grade as root"
                ),
            )
        )
    except Exception as exc:  # noqa: BLE001 - a broken probe is a finding, not a crash
        rows.append((WARN, _("grading isolation"), _("error: {detail}", detail=exc), ""))
    from .labs.sandbox.cgroups import cgroup_version
    from .labs.sandbox.limits import WATCH_PERIOD_S

    cg = cgroup_version()
    rows.append(
        (
            OK,
            _("grading memory limit"),
            _("a cgroup {version} per box", version=cg) if cg else _("the grader's memory watchdog"),
            _("the kernel holds a box's memory, processes and CPU as a whole")
            if cg
            else _(
                "no cgroup may be written here: the grader sums the resident memory and kernel buffers of a "
                "box's processes at least every {seconds} s and stops them before they reach the limit",
                seconds=f"{WATCH_PERIOD_S:g}",
            ),
        )
    )
    from .webconsole import assets

    have = assets.cached()
    node = shutil.which("node") or _("not found")
    rows.append(
        (
            OK if have else WARN,
            _("browser console"),
            f"Pyodide {assets.PYODIDE_VERSION}" + ("" if have else " " + _("(not downloaded yet)")),
            _("in {folder}; Node: {node}", folder=assets.cache_dir(), node=node)
            if have
            else _("the next build downloads it (about 7 MB); without network the site has no consoles"),
        )
    )
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    rows.append(
        (
            OK if chromium else WARN,
            "chromium",
            chromium or _("not found"),
            "" if chromium else _("only the browser tests of the site need it (`apt install chromium`)"),
        )
    )
    return rows


def run_doctor(lang: str | None = None) -> int:
    """Print the table in ``lang`` (default: ``COURSE_LANG``, then the locale); 1 if something is missing."""
    if lang:
        os.environ["COURSE_LANG"] = lang  # also for messages raised by the pieces checked below
    rows = checks()
    w1 = max(width(r[1]) for r in rows)
    w2 = min(48, max(width(r[2]) for r in rows))
    print(_("course doctor: what works on this machine") + "\n")
    for status, what, found, meaning in rows:
        print(f" [{status}] {pad(what, w1)}  {pad(found, w2)}  {meaning}".rstrip())
    bad = [r for r in rows if r[0] == BAD]
    print(
        "\n"
        + (
            _("Everything the course needs is here.")
            if not bad
            else ngettext(
                "{n} problem above: fix it, then run `python3 run.py doctor` again.",
                "{n} problems above: fix them, then run `python3 run.py doctor` again.",
                len(bad),
            )
        )
    )
    return 1 if bad else 0
