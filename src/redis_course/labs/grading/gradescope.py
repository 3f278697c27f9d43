"""``course gradescope LAB --out FILE.zip``: a Gradescope autograder that grades with the course's grader.

Upload FILE.zip as the assignment's autograder ("Zip file upload").  Gradescope unpacks it into
``/autograder/source``, runs ``setup.sh`` once when it builds the image, and ``run_autograder`` for
every submission, which must write ``/autograder/results/results.json`` (the layout ``otter generate``
uses too).  The zip holds::

    setup.sh            installs Python (3.11 or newer), redis-server and requirements.txt into /autograder/venv
    run_autograder      grades /autograder/submission with redis_course.labs.grading.autograder
    requirements.txt    the grader's dependencies, pinned to the versions this course was tested with
    course/src/redis_course/       the course's grader, as it is in this repository
    course/labs/NN-topic/          lab.yml, hints.yml, starter.py, tests/public and tests/hidden
                                   (never solution.py or wrong/)
    course/autograder.json         which lab, the feedback's language

``run_autograder`` reads ``AUTOGRADER_ROOT`` (default ``/autograder``) and ``AUTOGRADER_PYTHON``
(default ``$AUTOGRADER_ROOT/venv/bin/python``), so it can be tried on a local folder laid out like
Gradescope's.
"""

from __future__ import annotations

import json
import zipfile
from importlib import metadata
from pathlib import Path

from ...l10n import _
from .intake import GradingError
from ..authoring.model import Lab, LabError, find_lab

#: What the grader imports at run time (the site, notebooks and JupyterLab are not needed there).
GRADER_REQUIREMENTS = ("redis", "fakeredis", "lupa", "sortedcontainers", "PyYAML", "pytest", "babel", "wcwidth")
LAB_PRIVATE = ("solution.py", "wrong")
SKIP = ("__pycache__", ".pyc", ".pyo", ".DS_Store")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip redis-server bubblewrap libfaketime
PY=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv   # Ubuntu 22.04 images
  PY=python3.11
fi
"$PY" -m venv /autograder/venv
/autograder/venv/bin/pip install --disable-pip-version-check -r /autograder/source/requirements.txt
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade it with the course's grader, write results.json.
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
export COURSE_ROOT="$ROOT/source/course"
export PYTHONPATH="$COURSE_ROOT/src"
export PYTHONDONTWRITEBYTECODE=1
exec "$PY" -m redis_course.labs.grading.autograder --root "$ROOT"
"""


def requirements() -> str:
    """The grader's dependencies, pinned to the installed versions (those this course was tested with)."""
    lines = []
    for name in GRADER_REQUIREMENTS:
        try:
            lines.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            lines.append(name)
    return "\n".join(lines) + "\n"


def _skip(path: Path) -> bool:
    return any(part in SKIP or part.endswith(SKIP[1:]) for part in path.parts)


def _add_tree(zf: zipfile.ZipFile, src: Path, dest: str, private: tuple[str, ...] = ()) -> None:
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if p.is_dir() or p.is_symlink() or _skip(rel) or rel.parts[0] in private:
            continue
        zf.write(p, f"{dest}/{rel.as_posix()}")


def _add_text(zf: zipfile.ZipFile, name: str, text: str, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)


def build(lab: Lab, out: Path, *, lang: str = "en") -> Path:
    """Write the autograder zip for ``lab`` to ``out``."""
    if not lab.starter_file.exists() and not lab.lab_file.exists():
        raise GradingError(_("{lab} has no starter.py: run `python3 run.py labs sync` first.", lab=lab.id))
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    package = Path(__file__).resolve().parents[2]  # src/redis_course (this is labs/grading/gradescope.py)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        _add_text(zf, "setup.sh", SETUP_SH, 0o755)
        _add_text(zf, "run_autograder", RUN_AUTOGRADER, 0o755)
        _add_text(zf, "requirements.txt", requirements())
        _add_text(zf, "course/autograder.json", json.dumps({"lab": lab.id, "lang": lang}) + "\n")
        _add_tree(zf, package, "course/src/redis_course")
        _add_tree(zf, lab.path, f"course/labs/{lab.id}", LAB_PRIVATE)
    return out


def main(lab_spec: str, out: str, lang: str) -> int:
    try:
        lab = find_lab(lab_spec)
    except LabError as exc:
        raise GradingError(str(exc)) from None
    path = build(lab, Path(out), lang=lang)
    print(
        _(
            "Gradescope autograder for {lab} written to {path}. Upload it as the assignment's autograder "
            "(zip file); students hand in {lab}/lab.py.",
            lab=lab.id,
            path=path,
        )
    )
    return 0
