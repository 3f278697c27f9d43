"""Inside Gradescope: grade ``/autograder/submission`` and write ``/autograder/results/results.json``.

Run by the ``run_autograder`` script of the zip that :mod:`.gradescope` writes::

    python -m redis_course.labs.grading.autograder --root /autograder

The lab and the feedback's language come from ``$COURSE_ROOT/autograder.json``.  The submission's
``lab.py`` is taken from ``lab.py``, ``NN-topic/lab.py`` or ``labs/NN-topic/lab.py`` (a file upload, a
folder, or the student's repository), read like any submission (:mod:`.intake`: no links, at most
1 MiB), and graded by the same :func:`..engine.runner.run_lab` as ``course grade``, with public and hidden
tests.  When none is found, the starter is graded to list every test at 0 points.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from ... import paths
from ...l10n import _
from .intake import from_folder
from ..authoring.model import Lab, find_lab
from .orchestrate import missing
from .report import grader_error_log, gradescope_results
from ..engine.runner import LabResult, run_lab
from ..sandbox import make_run_dir

LAYOUTS = ("lab.py", "{lab}/lab.py", "labs/{lab}/lab.py")


def grade_submission(
    lab: Lab, submission: Path, lang: str, hide: tuple[str, ...] = (), backend: str = "auto"
) -> LabResult:
    """The result of the submission in ``submission`` (a folder), or a ``missing`` one."""
    found, problems = from_folder(submission, {lab.id}, lang, LAYOUTS) if submission.is_dir() else ({}, [])
    work = make_run_dir("course-autograder-")
    try:
        if lab.id in found:
            staged = work / "lab.py"
            staged.write_bytes(found[lab.id])
            return run_lab(lab, staged, visibility=("public", "hidden"), hide=(str(submission), *hide), backend=backend)
        listing = run_lab(lab, lab.student_file, visibility=("public", "hidden"), hide=hide, backend=backend)
        return missing(lab, listing, problems, lang)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def results_json(lab: Lab, res: LabResult, lang: str, seconds: float) -> dict:
    """Gradescope's results.json: the score, one entry per test, and a line on what was graded."""
    data = gradescope_results([(lab, res)], lang)
    data["execution_time"] = round(seconds, 1)
    from .grade import describe_isolation, isolation_mode

    data["output"] = _(
        "{lab}: {points} of {max_points} points ({status}; Redis: {backend}; isolation: {isolation}).",
        lang=lang,
        lab=lab.id,
        points=format(res.points, "g"),
        max_points=format(res.max_points, "g"),
        status=res.status,
        backend=res.backend or "-",
        isolation=describe_isolation(isolation_mode(), lang=lang),
    )
    data["stdout_visibility"] = "hidden"
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m redis_course.labs.grading.autograder")
    ap.add_argument("--root", default="/autograder", help="Gradescope's folder (submission/, results/, source/)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    started = time.monotonic()
    config = json.loads((paths.ROOT / "autograder.json").read_text(encoding="utf-8"))
    lab, lang = find_lab(config["lab"]), config.get("lang", "en")
    from ..check.selfcheck import backend_for

    backend, note = backend_for(lab, "auto", lang)  # Ubuntu 22.04's Redis 6.0: fakeredis for a 7.0 lab
    res = grade_submission(
        lab, root / "submission", lang, hide=(str(root / "source"), str(root / "results")), backend=backend
    )
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    data = results_json(lab, res, lang, time.monotonic() - started)
    if note:
        data["output"] += " " + note
    (out / "results.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{lab.id}: {res.points:g}/{res.max_points:g} ({res.status})")
    if res.status == "grader-error":  # the instructor's stdout; the student sees only the id
        print(grader_error_log(lab.id, res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
