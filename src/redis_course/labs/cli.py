"""The lab commands of ``course`` (added to its parser by :func:`add_lab_commands`).

course check [LAB] [--lang en|ru|zh]     public tests of one or all labs, with hints
course release OUT                        write the student edition of the repository
course grade SUBMISSIONS --out RESULTS    grade every student's labs (public + hidden tests)
course grade SUBMISSIONS --out RESULTS --student NAME    regrade one student into RESULTS
course gradescope LAB --out FILE.zip      a Gradescope autograder for one lab
course labs sync [--check]                regenerate starter.py from solution.py
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..l10n.messages import LANGS, current_lang


def _limits(args: argparse.Namespace):
    from .sandbox.limits import Limits

    kw = {}
    for name in ("call_timeout_s", "memory_mb", "cpu_s", "lab_budget_s", "box_cpus"):
        v = getattr(args, name, None)
        if v is not None:
            kw[name] = v
    return Limits(**kw) if kw else None


def _above_zero(kind):
    """An argparse type: a number of ``kind`` above 0, else one sentence saying so."""

    def parse(text: str):
        from ..l10n import _

        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not 0 < value < float("inf"):  # nan fails both comparisons
            raise argparse.ArgumentTypeError(_("{value} is not a number above 0.", value=repr(text)))
        return value

    return parse


def cmd_check(args: argparse.Namespace) -> int:
    from .check import selfcheck

    args.lang = args.lang or default_lang()
    os.environ["COURSE_LANG"] = args.lang
    source = Path(args.file) if args.file else None
    if args.solution:
        source = _solution(args.lab)
    if args.wrong:
        source = _wrong(args.lab, args.wrong)
    from .sandbox.launch import mode

    if mode() == "none":  # one line, then the check as usual
        from ..l10n import _

        print(
            _(
                "Note: bubblewrap (`bwrap`) is not usable here, so your lab code runs unisolated, "
                "as you, with resource limits only."
            )
        )
    if args.classroom:
        from .check import classroom

        return classroom.main(args.lab, args.lang, backend=args.backend)
    return selfcheck.main(args.lab, args.lang, backend=args.backend, source=source, verbose=args.verbose)


def _wrong(lab_spec: str | None, name: str) -> Path:
    """The composed module of ``labs/NN/wrong/NAME.py`` (solution.py with its definitions in place)."""
    from ..core.backend import CourseError
    from .authoring.model import find_lab
    from .authoring.wrong import composed_path

    if not lab_spec:
        raise CourseError("--wrong needs a lab number, e.g. `python3 run.py check 00 --wrong reset_keeps_key`.")
    return composed_path(find_lab(lab_spec), name)


def default_lang() -> str:
    """The student's language: ``COURSE_LANG`` when set, else the language the student edition was
    released in (``edition.json``), else the locale's."""
    from ..paths import edition

    if os.environ.get("COURSE_LANG", "").strip():
        return current_lang()
    lang = edition().get("lang")
    return lang if lang in LANGS else current_lang()


def _solution(lab_spec: str | None) -> Path:
    from ..core.backend import CourseError
    from ..l10n import _
    from .authoring.model import find_lab

    if not lab_spec:
        raise CourseError(_("--solution needs a lab number, e.g. `python3 run.py check 01 --solution`."))
    lab = find_lab(lab_spec)
    if not lab.solution_file.exists():
        raise CourseError(
            _(
                "This copy of the course has no reference solutions; check your own work with "
                "`python3 run.py check {lab}`.",
                lab=lab.number,
            )
        )
    return lab.solution_file


def cmd_release(args: argparse.Namespace) -> int:
    from .publish import release

    from ..l10n import _

    out = release.release(Path(args.out), force=args.force, lang=args.lang)
    print(_("Student edition written to {out}.", out=out))
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from .grading import grade

    import sys

    from ..l10n import _

    try:
        summary = grade.grade(
            Path(args.submissions),
            Path(args.out),
            labs=args.lab or None,
            lang=args.lang,
            backend=args.backend,
            workers=args.workers,
            limits=_limits(args),
            progress=not args.no_progress,
            student=args.student,
            isolate=not args.no_isolation,
            restart=args.restart,
            feedback_lang=args.feedback_lang,
        )
    except grade.GradingInterrupted as exc:
        print(str(exc), file=sys.stderr)
        return 130
    print(summary.render())
    print(_("Isolation of student code: {how}.", how=summary.isolation))
    return 0 if summary.ok else 1


def cmd_gradescope(args: argparse.Namespace) -> int:
    from .grading import gradescope

    return gradescope.main(args.lab, args.out, args.lang)


def cmd_labs(args: argparse.Namespace) -> int:
    from .authoring import starter
    from .authoring.model import check_languages, discover

    stale = starter.sync(check=args.check)
    for p in stale:
        print(f"{'stale' if args.check else 'written'}: {p}")
    problems = [p for lab in discover() for p in check_languages(lab)]
    for p in problems:
        print(f"missing translation: {p}")
    if args.check and stale:
        print("Run `python3 run.py labs sync` to regenerate the starters from solution.py.")
    failed = bool((args.check and stale) or problems)
    if not failed:  # one line on success, so a check that passed is told from one that did not run
        print(
            f"All {len(discover())} labs' starters match their solutions."
            if args.check
            else f"{len(stale)} starters written, the others were up to date."
        )
    return 1 if failed else 0


def add_lab_commands(sub) -> None:
    c = sub.add_parser("check", help="run the public tests of one or all labs, with hints")
    c.add_argument("lab", nargs="?", help="lab number or folder, e.g. 01 or 01-incr (default: all)")
    c.add_argument(
        "--lang",
        choices=LANGS,
        default=None,
        help="language of the report (default: COURSE_LANG, the student edition's, the locale's)",
    )
    c.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="every detail of each failure: the whole message, your code's lines, what it printed",
    )
    c.add_argument(
        "--backend",
        choices=["auto", "redis-server", "fakeredis"],
        default="auto",
        help="the private Redis to use when REDIS_URL is not set (auto: redis-server if installed)",
    )
    c.add_argument("--file", help="check this file instead of the lab's lab.py")
    c.add_argument("--solution", action="store_true", help="check the reference solution (instructors)")
    c.add_argument("--wrong", metavar="NAME", help="check the known-wrong implementation wrong/NAME.py (lab authors)")
    c.add_argument(
        "--classroom",
        action="store_true",
        help="also report the points to GitHub Classroom (in its autograding workflow)",
    )
    c.set_defaults(func=cmd_check)

    r = sub.add_parser("release", help="write the student edition of the repository to OUT")
    r.add_argument("out")
    r.add_argument("--force", action="store_true", help="replace OUT if it exists")
    r.add_argument(
        "--lang",
        choices=LANGS,
        default="en",
        help="the students' language: lab.py docstrings, the README's first section, check's default",
    )
    r.set_defaults(func=cmd_release)

    g = sub.add_parser("grade", help="grade SUBMISSIONS (one folder or zip per student)")
    g.add_argument("submissions")
    g.add_argument("--out", required=True, help="folder for grades.csv, feedback, results.json, JUnit XML")
    g.add_argument("--lab", action="append", help="grade only this lab (repeatable)")
    g.add_argument(
        "--lang",
        choices=LANGS,
        default=None,
        help="language of the feedback (default: en, or that of RESULTS when regrading)",
    )
    g.add_argument(
        "--feedback-lang",
        choices=(*LANGS, "auto"),
        default=None,
        help="language of the feedback (default: --lang); auto: each student's, from their lab.py",
    )
    g.add_argument(
        "--student",
        metavar="NAME",
        help="regrade only this student (their name in grades.csv or their folder) into RESULTS",
    )
    g.add_argument("--backend", choices=["auto", "redis-server", "fakeredis"], default="auto")
    g.add_argument(
        "--workers", type=_above_zero(int), default=None, help="parallel grading processes (default: CPU cores)"
    )
    g.add_argument("--call-timeout", dest="call_timeout_s", type=_above_zero(float), help="seconds per function call")
    g.add_argument("--memory-mb", dest="memory_mb", type=_above_zero(int), help="address-space limit of student code")
    g.add_argument("--cpu-s", dest="cpu_s", type=_above_zero(float), help="CPU seconds per student process")
    g.add_argument(
        "--lab-budget",
        dest="lab_budget_s",
        type=_above_zero(float),
        help="seconds all calls of one lab may take together (default 90)",
    )
    g.add_argument(
        "--box-cpus",
        dest="box_cpus",
        type=_above_zero(float),
        help="cores one student's box may use at once (default 1; a cgroup holds it where the machine has one)",
    )
    g.add_argument("--no-progress", action="store_true")
    g.add_argument(
        "--restart", action="store_true", help="grade everything again instead of resuming the grading kept in RESULTS"
    )
    g.add_argument(
        "--no-isolation",
        action="store_true",
        help="grade even where student code cannot be isolated (not root and no bubblewrap)",
    )
    g.set_defaults(func=cmd_grade)

    gs = sub.add_parser("gradescope", help="write a Gradescope autograder (zip) for LAB")
    gs.add_argument("lab", help="lab number or folder, e.g. 01 or 01-incr")
    gs.add_argument("--out", required=True, help="the zip to write, e.g. autograder-01.zip")
    gs.add_argument("--lang", choices=LANGS, default="en", help="language of the feedback students read")
    gs.set_defaults(func=cmd_gradescope)

    labs = sub.add_parser("labs", help="lab maintenance: regenerate starters")
    labs.add_argument("action", choices=["sync"])
    labs.add_argument("--check", action="store_true", help="only report stale starters (exit 1 if any)")
    labs.set_defaults(func=cmd_labs)
