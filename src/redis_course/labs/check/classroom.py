"""GitHub Classroom autograding for the student edition.

``python3 run.py check LAB --classroom`` runs the lab's public tests exactly as ``check`` does, prints
the same table, and writes the result for GitHub Classroom's reporter
(``classroom-resources/autograding-grading-reporter``) to the step's output: ``result=`` base64 of
``{"version": 1, "status", "max_score", "tests": [{"name", "status", "score", "message", ...}]}``,
the format of GitHub's own graders.  Points are the tests' points, so a half-done lab gets half.

:func:`workflow` writes ``.github/workflows/classroom.yml``: one step per lab (id ``labNN``), then the
reporter, which sums the points and tells Classroom.  Workflow and job names are the ones Classroom
requires ("Autograding Tests", ``run-autograding-tests``).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from ...l10n import _
from ..authoring.model import Lab
from ..engine.runner import LabResult
from .texts import t

REPORTER = "classroom-resources/autograding-grading-reporter@v1"


def runner_id(lab: Lab) -> str:
    return f"lab{lab.number}"


def _test_entry(lab: Lab, test, lang: str) -> dict:
    message = test.message.strip()
    hint = lab.hint(test.hint, lang)
    if hint and not test.passed:
        message = f"{message}\n{t('hint', lang)}: {hint}".strip()
    return {
        "name": lab.test_title(test.name, lang),
        "status": "pass" if test.passed else "fail",
        "score": test.points,
        "message": "" if test.passed else message,
        "line_no": 0,
        "filename": f"labs/{lab.id}/lab.py",
        "test_code": f"python3 run.py check {lab.number}",
        "execution_time": f"{test.duration:.2f}s",
    }


def result(lab: Lab, res: LabResult, lang: str) -> dict:
    """The reporter's view of one lab's check: every counted test with its points."""
    tests = [_test_entry(lab, x, lang) for x in res.tests if x.counted]
    if res.status in ("missing", "grader-error", "import-error") and not tests:
        tests = [
            {
                "name": lab.id,
                "status": "error",
                "score": 0,
                "line_no": 0,
                "filename": f"labs/{lab.id}/lab.py",
                "message": res.message.strip()[:2000],
                "test_code": f"python3 run.py check {lab.number}",
            }
        ]
    if res.status == "grader-error" or (res.status != "ok" and not res.tests):
        status = "error"
    else:
        status = "pass" if res.tests and res.points == res.max_points else "fail"
    return {"version": 1, "status": status, "max_score": res.max_points, "tests": tests}


def encode(data: dict) -> str:
    return base64.b64encode(json.dumps(data, ensure_ascii=False).encode("utf-8")).decode("ascii")


def report(lab: Lab, res: LabResult, lang: str, environ: dict | None = None) -> None:
    """Write ``result=...`` to the step's output file ($GITHUB_OUTPUT), or say where it would go."""
    environ = os.environ if environ is None else environ
    line = f"result={encode(result(lab, res, lang))}\n"
    target = environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line)
    else:
        print(
            _(
                "(GitHub Classroom: {points} of {max_points} points; outside GitHub Actions nothing is sent.)",
                lang=lang,
                points=format(res.points, "g"),
                max_points=format(res.max_points, "g"),
            )
        )


def workflow(labs: list[Lab]) -> str:
    """``.github/workflows/classroom.yml``: check every lab on each push and report the points."""
    steps = [
        "    - name: Checkout code\n      uses: actions/checkout@v4\n",
        "    - name: Install redis-server and bubblewrap\n"
        "      run: sudo apt-get update -qq && sudo apt-get install -y -qq redis-server bubblewrap\n",
        "    - name: Set up the course\n      run: python3 run.py doctor\n",
    ]
    for lab in labs:
        steps.append(
            f"    - name: {lab.id}\n      id: {runner_id(lab)}\n"
            f"      run: python3 run.py check {lab.number} --classroom\n"
            "      continue-on-error: true\n      timeout-minutes: 15\n"
        )
    env = "".join(
        f'        {runner_id(lab).upper()}_RESULTS: "${{{{steps.{runner_id(lab)}.outputs.result}}}}"\n' for lab in labs
    )
    steps.append(
        f"    - name: Autograding Reporter\n      uses: {REPORTER}\n      env:\n{env}"
        f"      with:\n        runners: {','.join(runner_id(lab) for lab in labs)}\n"
    )
    return (
        "# Checks every lab on each push with `python3 run.py check NN --classroom` (the public tests)\n"
        "# and reports the points to GitHub Classroom.\n"
        "name: Autograding Tests\n'on':\n- push\n- repository_dispatch\n"
        "permissions:\n  checks: write\n  actions: read\n  contents: read\n"
        "jobs:\n  run-autograding-tests:\n    runs-on: ubuntu-latest\n"
        "    if: github.actor != 'github-classroom[bot]'\n    timeout-minutes: 60\n    steps:\n" + "".join(steps)
    )


def write_workflow(out: Path, labs: list[Lab]) -> Path:
    path = out / ".github" / "workflows" / "classroom.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow(labs), encoding="utf-8")
    return path


def main(lab_spec: str | None, lang: str, backend: str = "auto") -> int:
    """``check LAB --classroom``: the check table, then the result for the reporter.  Exit 0 when the
    check ran (the points say how it went); the reporter marks the run failed when points are missing."""
    from ...core.backend import CourseError
    from .selfcheck import run_check

    if not lab_spec:
        raise CourseError(_("--classroom needs a lab number: the workflow has one step per lab."))
    results, table = run_check(lab_spec, lang=lang, backend=backend)
    print(table)
    for lab, res in results:
        report(lab, res, lang)
    return 0
