"""The ``course`` command.  Run it through ``python3 run.py <command>``, which sets everything up first.

serve      build the site from the stored notebooks, serve it at http://127.0.0.1:8000
build      the same, without serving (``--strict`` by default; ``--site-url URL`` to publish it)
test       run the whole test suite (pytest on two xdist workers), on fakeredis and on the real server
           when it is up; ``--fast`` leaves out the slow marks and the browser (the edit loop)
doctor     what works on this machine, and what each missing piece means
jupyter    open JupyterLab on the notebooks in one language
notebooks  re-execute and store notebooks/<lang>/*.ipynb (``--check``: only report stale ones)
i18n       translation parity and outdated translations
quiz       ``quiz export LESSON --format gift|moodle-xml --lang xx``: a lesson's questions for a
           learning platform (Moodle, and most that import its formats)
cluster    start, stop or show a local Redis Cluster (3 primaries, 3 replicas) for lesson 06
architecture  write ARCHITECTURE.md from the modules' docstrings (``--check``: only report)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import paths
from .core.backend import CourseError
from .l10n import _
from .paths import LANGS


def _log(text: str) -> None:
    print(text, flush=True)


def cmd_build(args: argparse.Namespace) -> int:
    from .site import build as site
    from .notebooks import render

    _log("[course] " + _("rendering the notebook pages from notebooks/<lang>/*.ipynb (nothing is executed)"))
    started = time.monotonic()
    for line in render.stale_sources():
        _log("[course] " + line)
    render.render_pages(log=_log)
    _log("[course] " + _("building the site ({seconds:.0f} s so far)", seconds=time.monotonic() - started))
    site.build(strict=not args.no_strict, log=_log, site_url=args.site_url)
    _log("[course] " + _("site built in {seconds:.0f} s", seconds=time.monotonic() - started))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .site import build as site

    if not args.no_build:
        _port_free(args.port)
        cmd_build(args)
    site.serve(port=args.port)
    return 0


def _port_free(port: int, host: str = "127.0.0.1") -> None:
    """Stop at once, with the sentence :func:`.site.serve` would say after a build of a minute or
    more, when ``serve`` cannot listen on ``port``."""
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the site's server does
        try:
            s.bind((host, port))
        except OSError as exc:
            raise SystemExit(
                _(
                    "Port {port} on {host} is busy ({detail}); stop the other server or pass --port.",
                    port=port,
                    host=host,
                    detail=exc.strerror,
                )
            ) from None


def _call(cmd: list[str], **kwargs) -> int:
    """Run ``cmd``; a SIGTERM to this process stops it too (a process manager or an IDE stops us that way)."""
    proc = subprocess.Popen(cmd, **kwargs)
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.wait()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


TEST_WORKERS = 2  # pytest-xdist workers; `-n N` on the command line decides instead
FAST_MARKS = "not slow and not browser"  # --fast: no browser, known-wrong matrix, notebook runs, red team
_OWN_WORKERS = ("-n", "--numprocesses", "--dist")  # the caller chooses the workers
_DEBUGGING = ("--pdb", "--trace", "no:xdist")  # one process: a debugger, or xdist switched off


def pytest_command(pytest_args: list[str]) -> list[str]:
    """pytest's arguments for ``course test ARGS``: two xdist workers with ``--dist loadgroup`` (the tests
    that share an expensive fixture keep to one worker; tests/conftest.py), unless ARGS choose the
    workers, disable xdist or debug; ``--fast`` becomes ``-m FAST_MARKS``.  Everything else is passed on."""
    args = list(pytest_args)
    extra = []
    if "--fast" in args:
        args.remove("--fast")
        extra += ["-m", FAST_MARKS]
    if importlib.util.find_spec("xdist") and not any(a.startswith(_OWN_WORKERS) or a in _DEBUGGING for a in args):
        extra += ["-n", str(TEST_WORKERS), "--dist", "loadgroup"]
    return extra + args


def cmd_test(args: argparse.Namespace) -> int:
    import compileall

    # the course's modules as .pyc first (only what changed since the last run): the graders, kernels and
    # CLI processes of the suite import them hundreds of times, and PYTHONDONTWRITEBYTECODE=1 would
    # otherwise have each of them compile the sources again
    compileall.compile_dir(str(paths.ROOT / "src"), quiet=1, workers=0)
    return _call([sys.executable, "-m", "pytest", *pytest_command(args.pytest_args)], cwd=paths.ROOT)


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import run_doctor

    return run_doctor(lang=args.lang)


JUPYTER_LOCALES = {"en": "en", "ru": "ru_RU", "zh": "zh_CN"}  # JupyterLab's language packs


def _jupyter_overrides_dir() -> Path:
    from jupyterlab.commands import get_app_dir

    return Path(get_app_dir()) / "settings" / "overrides.d"


def jupyter_settings(lang: str) -> dict:
    """JupyterLab's defaults for a reader of ``lang``: its menus and dialogs in that language, no
    question about fetching Jupyter's news (the course asks nothing of the network, and the Russian
    pack does not translate it), and, outside English, no launcher cards for Jupytext's text
    notebooks (Jupytext has no Russian or Chinese; the course's notebooks are .ipynb)."""
    settings: dict = {
        "@jupyterlab/translation-extension:plugin": {"locale": JUPYTER_LOCALES[lang]},
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    }
    if lang != "en":
        settings["jupyterlab-jupytext:plugin"] = {"auto:percent": False, "md:myst": False}
    return settings


def jupyter_locale(lang: str) -> Path:
    """JupyterLab's own menus and dialogs in ``lang``: the course's environment gets that locale as
    JupyterLab's default (an override file of its own, :func:`jupyter_settings`; a locale the reader
    picked in JupyterLab wins)."""
    import json

    folder = _jupyter_overrides_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "redis-course-language.json"
    path.write_text(json.dumps(jupyter_settings(lang), indent=1) + "\n", encoding="utf-8")
    return path


def cmd_jupyter(args: argparse.Namespace) -> int:
    from .l10n import current_lang

    if args.lang is None:  # the reader's language: a Russian edition opens the Russian notebooks
        args.lang = current_lang()
        if not (paths.NOTEBOOKS / args.lang).is_dir():
            args.lang = "en"
    env = dict(os.environ, COURSE_LANG=args.lang)
    folder = paths.NOTEBOOKS / args.lang
    backend = "REDIS_URL=" + env["REDIS_URL"] if env.get("REDIS_URL") else "fakeredis"
    _log(
        "[course] "
        + _(
            "JupyterLab on {folder}/ ({backend})",
            lang=args.lang,
            folder=folder.relative_to(paths.ROOT),
            backend=backend,
        )
    )
    extra = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # containers run as root
    try:
        jupyter_locale(args.lang)
    except OSError:  # a read-only environment: JupyterLab keeps its own language, the notebooks are still ours
        pass
    return _call(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            f"--notebook-dir={folder}",
            "--ServerApp.ip=127.0.0.1",
            "--LabApp.news_url=None",  # no calls home: works offline
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *extra,
            *args.jupyter_args,
        ],
        env=env,
    )


def cmd_notebooks(args: argparse.Namespace) -> int:
    from .notebooks import execute

    if args.check:
        stale = execute.stale()
        for path, why in stale.items():
            _log(_("stale ({why}): {path}", why=why, path=path.relative_to(paths.ROOT)))
        if stale:
            _log(_("Run `python3 run.py notebooks --execute` to re-execute them."))
            return 1
        _log(
            _(
                "All {n} stored notebooks match their sources, the course code and the installed versions.",
                n=len(execute.sources()) * len(LANGS),
            )
        )
        return 0
    written = execute.regenerate(force=args.force, log=_log)
    _log(_("{n} notebooks executed and stored in notebooks/<lang>/.", n=len(written)))
    return 0


def cmd_i18n(args: argparse.Namespace) -> int:
    from .i18n import parity

    if args.action == "check":
        from .quiz import parity as quiz_parity

        return parity.main_check(quiz_parity.problems)
    if args.action == "status":
        return parity.main_status()
    if args.action == "extract":
        return parity.main_extract(prune=args.prune)
    return parity.main_stamp(args.pages)


def cmd_quiz(args: argparse.Namespace) -> int:
    from .quiz import QuizError, export

    try:
        text = export.export(args.lesson, args.format, args.lang, site_url=args.site_url)
    except QuizError as exc:
        raise CourseError(str(exc)) from None
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CourseError(
                _("Cannot write {path}: {reason}", path=args.output, reason=exc.strerror or exc)
            ) from None
    else:
        sys.stdout.write(text)
    return 0


def cmd_cluster(args: argparse.Namespace) -> int:
    from . import cluster

    return {"start": cluster.cli_start, "stop": cluster.cli_stop, "status": cluster.cli_status}[args.action]()


def cmd_architecture(args: argparse.Namespace) -> int:
    from . import architecture

    return architecture.main(check=args.check)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="course", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)

    site_url = dict(
        default=os.environ.get("COURSE_SITE_URL") or None,
        metavar="URL",
        help="where the site will be published (canonical links, sitemap, hreflang); "
        "default: COURSE_SITE_URL, else http://127.0.0.1:8000/",
    )
    b = sub.add_parser("build", help="build the site from the stored notebooks (executes nothing)")
    b.add_argument("--no-strict", action="store_true", help="do not fail on mkdocs warnings")
    b.add_argument("--site-url", **site_url)
    b.set_defaults(func=cmd_build)

    s = sub.add_parser("serve", help="build and serve the site at http://127.0.0.1:8000")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--no-build", action="store_true", help="serve site/ as it is")
    s.add_argument("--no-strict", action="store_true")
    s.add_argument("--site-url", **site_url)
    s.set_defaults(func=cmd_serve)

    t = sub.add_parser("test", help="run the whole test suite (--fast: without the slow tests)")
    t.add_argument("pytest_args", nargs=argparse.REMAINDER)
    t.set_defaults(func=cmd_test)

    d = sub.add_parser("doctor", help="what works on this machine")
    d.add_argument(
        "--lang",
        choices=LANGS,
        help="language of the report (default: COURSE_LANG, then the student edition's, then the locale)",
    )
    d.set_defaults(func=cmd_doctor)

    j = sub.add_parser("jupyter", help="open JupyterLab on the notebooks in one language")
    j.add_argument(
        "--lang",
        choices=LANGS,
        help="language of the notebooks (default: the reader's, as for every "
        "command: COURSE_LANG, then the student edition's, then the locale's)",
    )
    j.add_argument("jupyter_args", nargs=argparse.REMAINDER)
    j.set_defaults(func=cmd_jupyter)

    n = sub.add_parser("notebooks", help="re-execute and store notebooks/<lang>/*.ipynb whose source or code changed")
    n.add_argument("--check", action="store_true", help="only report stale notebooks (exit 1 if any)")
    n.add_argument("--execute", action="store_true", help="re-execute the stale notebooks (the default)")
    n.add_argument("--force", action="store_true", help="re-execute every notebook")
    n.set_defaults(func=cmd_notebooks)

    i = sub.add_parser("i18n", help="translation parity and outdated translations")
    i.add_argument(
        "action",
        choices=["check", "status", "stamp", "extract"],
        help="check: fail on structural differences or missing translations; status: list outdated "
        "pages and catalog entries; extract: update locale/*/course.po from the code; "
        "stamp: record that PAGES (docs/ru/... or docs/zh/...) or notebook sources (notebooks/NN-topic.py) are up to date",
    )
    i.add_argument("pages", nargs="*")
    i.add_argument(
        "--prune", action="store_true", help="with extract: delete the catalog entries no longer used in the code"
    )
    i.set_defaults(func=cmd_i18n)

    qz = sub.add_parser("quiz", help="a lesson's questions for a learning platform (Moodle GIFT or Moodle XML)")
    qz.add_argument("action", choices=["export"])
    qz.add_argument("lesson", metavar="LESSON", help="the lesson: 01-incr, or just 01")
    qz.add_argument("--format", choices=["gift", "moodle-xml"], default="gift")
    qz.add_argument("--lang", choices=LANGS, default="en", help="the language of the questions (default: en)")
    qz.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of the standard output")
    qz.add_argument("--site-url", **site_url)
    qz.set_defaults(func=cmd_quiz)

    c = sub.add_parser("cluster", help="a local Redis Cluster for lesson 06")
    c.add_argument(
        "action",
        choices=["start", "stop", "status"],
        help="start: six redis-server nodes on 127.0.0.1 (state in build/cluster.json); "
        "status: nodes, roles, slots, keys; stop: stop them all and remove their data",
    )
    c.set_defaults(func=cmd_cluster)

    a = sub.add_parser("architecture", help="write ARCHITECTURE.md, one line per module, from the docstrings")
    a.add_argument(
        "--check",
        action="store_true",
        help="only report modules missing from the page and a stale page (exit 1 if any)",
    )
    a.set_defaults(func=cmd_architecture)

    from .labs.cli import add_lab_commands  # a broken lab package is an error to see, not a missing command

    add_lab_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["test"]:  # everything after `test` belongs to pytest, options included
        args = argparse.Namespace(command="test", func=cmd_test, pytest_args=argv[1:])
    elif argv[:1] == ["jupyter"]:  # --lang is ours; every other option goes to JupyterLab
        j = argparse.ArgumentParser(prog="course jupyter")
        j.add_argument("--lang", choices=LANGS)
        args, rest = j.parse_known_args(argv[1:])
        args.command, args.func, args.jupyter_args = "jupyter", cmd_jupyter, rest
    else:
        args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CourseError as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a clear line for people; the traceback only on request
        if os.environ.get("COURSE_DEBUG"):
            raise
        from .site.build import SiteBuildError

        if isinstance(exc, SiteBuildError):
            print(exc, file=sys.stderr)
            return 1
        name = type(exc).__name__
        print(
            f"course {args.command}: {name}: {exc}\n" + _("(set COURSE_DEBUG=1 to see the traceback)"), file=sys.stderr
        )
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
