"""Intake of submissions: which students there are, and their ``lab.py`` files, read safely.

SUBMISSIONS holds one entry per student: a folder that is a copy of the student edition's ``labs/``
(``SUBMISSIONS/alice/01-incr/lab.py``; a ``labs/`` level inside is accepted too), or a zip of it
(``SUBMISSIONS/bob.zip``).  Only each lab's ``lab.py`` is taken, read without following links and at
most 1 MiB (zip members: no absolute paths, no ``..``, no links, size checked while reading); tests,
hints and lab.yml always come from the course.  Names are given by :mod:`.names`.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ...core.backend import CourseError
from ...l10n import _
from ..authoring.model import Lab
from .names import Student, assign, edition_lang, sort_key
from ..sandbox import MAX_SOURCE_BYTES

LAB_FILE = re.compile(r"^(?:.*/)?(?P<lab>\d\d-[a-z0-9][a-z0-9-]*)/lab\.py$")
MAX_ZIP_MEMBERS = 10_000


class GradingError(CourseError):
    """Grading cannot start or continue: one sentence for the instructor."""


@dataclass
class Submission:
    student: Student
    entry: Path
    files: dict[str, Path] = field(default_factory=dict)  # lab id -> staged copy of lab.py
    problems: list[str] = field(default_factory=list)  # what was refused, in the feedback's language
    lang: str | None = None  # the language of the edition its lab.py files came from, when they tell


def entries(submissions: Path) -> list[tuple[Path, Student]]:
    """Every student entry of SUBMISSIONS with its name; an error when there is none."""
    if not submissions.is_dir():
        raise GradingError(_("The submissions folder {path} does not exist or is not a folder.", path=submissions))
    found = []
    for entry in sorted(submissions.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir():
            found.append((entry, "dir"))
        elif entry.is_file() and entry.name.lower().endswith(".zip") and len(entry.name) > 4:
            found.append((entry, "zip"))
    if not found:
        raise GradingError(
            _("The submissions folder {path} holds no student folder or zip: nothing to grade.", path=submissions)
        )
    students = assign([(p.name, kind) for p, kind in found])
    return sorted(zip((p for p, _kind in found), students), key=lambda pair: sort_key(pair[1]))


def read_no_follow(path: Path, base: Path) -> bytes | None:
    """The file's bytes if no part of ``path`` below ``base`` is a link and it is small enough."""
    current = base
    for part in path.relative_to(base).parts:
        current = current / part
        if current.is_symlink():
            return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
            return None
        return os.read(fd, MAX_SOURCE_BYTES + 1)[:MAX_SOURCE_BYTES]
    finally:
        os.close(fd)


def from_folder(
    folder: Path, lab_ids: set[str], lang: str, layouts: tuple[str, ...] = ("{lab}/lab.py", "labs/{lab}/lab.py")
) -> tuple[dict[str, bytes], list[str]]:
    """Each lab's ``lab.py`` under ``folder``, in the first of ``layouts`` that has one."""
    found, problems = {}, []
    for lab_id in sorted(lab_ids):
        for layout in layouts:
            cand = folder / layout.format(lab=lab_id)
            if cand.exists() or cand.is_symlink():
                data = read_no_follow(cand, folder)
                if data is None:
                    problems.append(
                        _(
                            "{file} refused: a link, not a file, or over 1 MiB.",
                            file=layout.format(lab=lab_id),
                            lang=lang,
                        )
                    )
                else:
                    found[lab_id] = data
                break
    return found, problems


def _zip_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, lab_ids: set[str], lang: str
) -> tuple[str | None, bytes | str | None]:
    """``(lab id, bytes)`` for a lab.py member, ``(None, problem)`` for a refused one, ``(None, None)`` else."""
    name = info.filename.replace("\\", "/")
    if name.startswith("/") or ".." in name.split("/") or re.match(r"^[A-Za-z]:", name):
        return None, _("Unsafe path refused: {name}.", name=name[:100], lang=lang)
    m = LAB_FILE.match(name)
    if not m or m.group("lab") not in lab_ids or name.count("/") > 3:
        return None, None
    if stat.S_ISLNK(info.external_attr >> 16):
        return None, _("{name} refused: a link.", name=name, lang=lang)
    too_big = _("{name} refused: over 1 MiB.", name=name, lang=lang)
    if info.file_size > MAX_SOURCE_BYTES:
        return None, too_big
    with zf.open(info) as f:
        data = f.read(MAX_SOURCE_BYTES + 1)
    return (None, too_big) if len(data) > MAX_SOURCE_BYTES else (m.group("lab"), data)


def from_zip(path: Path, lab_ids: set[str], lang: str) -> tuple[dict[str, bytes], list[str]]:
    found, problems = {}, []
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                return {}, [_("The zip has more than {n} entries.", n=MAX_ZIP_MEMBERS, lang=lang)]
            for info in members:
                lab, data = _zip_member(zf, info, lab_ids, lang)
                if lab is None:
                    problems += [data] if data else []
                elif lab in found:
                    problems.append(_("{lab}: several lab.py in the zip, the first one is graded.", lab=lab, lang=lang))
                else:
                    found[lab] = data
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
        problems.append(_("The zip cannot be read: {error}.", error=exc, lang=lang))
    return found, problems


def stage_files(sub: Submission, files: dict[str, bytes], stage: Path) -> None:
    """Copy the accepted ``lab.py`` files to ``stage`` (the only student files the grader reads)."""
    stage.mkdir(parents=True, exist_ok=True)
    for lab_id, data in files.items():
        dest = stage / f"{lab_id}.py"
        dest.write_bytes(data)
        sub.files[lab_id] = dest


def collect(
    submissions: Path, stage: Path, labs: list[Lab], *, lang: str = "en", only: Student | None = None
) -> list[Submission]:
    """Every student's submission (or ``only`` that one), its files staged under ``stage/<n>/``."""
    lab_ids = {lab.id for lab in labs}
    subs = []
    for n, (entry, student) in enumerate(entries(submissions)):
        if only is not None and student != only:
            continue
        reader = from_folder if entry.is_dir() else from_zip
        files, problems = reader(entry, lab_ids, lang)
        sub = Submission(
            student, entry, problems=problems, lang=edition_lang(files, {lab.id: lab.starter_file for lab in labs})
        )
        stage_files(sub, files, stage / str(n))
        subs.append(sub)
    return subs


def find_student(submissions: Path, wanted: str) -> Student:
    """The student called ``wanted`` (their name in grades.csv, or their folder's name)."""
    students = [s for _entry, s in entries(submissions)]
    for s in students:
        if s.matches(wanted):
            return s
    raise GradingError(_("No student called {name} in {path}.", name=wanted, path=submissions))
