"""``course grade SUBMISSIONS --out RESULTS``: grade every student's labs with public and hidden tests.

SUBMISSIONS holds one entry per student: a folder that is a copy of the student edition's
``labs/`` (``SUBMISSIONS/alice/01-incr/lab.py``; a ``labs/`` level inside is accepted too), or a
zip of it (``SUBMISSIONS/bob.zip``).  Only each lab's ``lab.py`` is taken, read without following
links and at most 1 MiB (zip members: no absolute paths, no ``..``, no links, size checked while
reading); tests, hints and lab.yml always come from this repository.

Each (student, lab) is graded by :func:`.runner.run_lab` in its own grader process with its own
private Redis and sandboxed student process; ``--workers`` of them run at once (default: one per
CPU core).  Before the students, each lab's reference solution is graded once on the same backend:
it must score full marks, and it gives the list of tests and points for labs a student did not hand in.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import statistics
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from .model import Lab, LabError, discover, find_lab
from .report import write_csv, write_student
from .runner import LabResult, TestResult, run_lab
from .sandbox import MAX_SOURCE_BYTES, ForkServer, Limits, make_run_dir

LAB_FILE = re.compile(r"^(?:.*/)?(?P<lab>\d\d-[a-z0-9][a-z0-9-]*)/lab\.py$")
MAX_ZIP_MEMBERS = 10_000


@dataclass
class Submission:
    student: str
    files: dict[str, Path] = field(default_factory=dict)  # lab id -> staged copy of lab.py
    problems: list[str] = field(default_factory=list)


def safe_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^\w.-]", "_", name, flags=re.ASCII).strip("._")[:80] or "student"
    if base[0] in "-+=@":
        base = "_" + base
    candidate, n = base, 2
    while candidate.lower() in taken:
        candidate, n = f"{base}_{n}", n + 1
    taken.add(candidate.lower())
    return candidate


def _read_no_follow(path: Path, base: Path) -> bytes | None:
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


def _from_folder(folder: Path, lab_ids: set[str]) -> tuple[dict[str, bytes], list[str]]:
    found, problems = {}, []
    for lab_id in sorted(lab_ids):
        for cand in (folder / lab_id / "lab.py", folder / "labs" / lab_id / "lab.py"):
            if cand.exists() or cand.is_symlink():
                data = _read_no_follow(cand, folder)
                if data is None:
                    problems.append(f"{lab_id}/lab.py refused (a link, not a file, or over 1 MiB)")
                else:
                    found[lab_id] = data
                break
    return found, problems


def _from_zip(path: Path, lab_ids: set[str]) -> tuple[dict[str, bytes], list[str]]:
    found, problems = {}, []
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                return {}, [f"the zip has more than {MAX_ZIP_MEMBERS} entries"]
            for info in members:
                name = info.filename.replace("\\", "/")
                parts = name.split("/")
                if name.startswith("/") or ".." in parts or re.match(r"^[A-Za-z]:", name):
                    problems.append(f"unsafe path refused: {name[:100]}")
                    continue
                m = LAB_FILE.match(name)
                if not m or m.group("lab") not in lab_ids or name.count("/") > 3:
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):
                    problems.append(f"{name}: a link, refused")
                    continue
                if info.file_size > MAX_SOURCE_BYTES:
                    problems.append(f"{name}: over 1 MiB, refused")
                    continue
                with zf.open(info) as f:
                    data = f.read(MAX_SOURCE_BYTES + 1)
                if len(data) > MAX_SOURCE_BYTES:
                    problems.append(f"{name}: over 1 MiB, refused")
                    continue
                lab = m.group("lab")
                if lab in found:
                    problems.append(f"{lab}: several lab.py in the zip, the first one is graded")
                    continue
                found[lab] = data
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
        problems.append(f"the zip cannot be read: {exc}")
    return found, problems


def collect(submissions: Path, stage: Path, labs: list[Lab]) -> list[Submission]:
    """Stage each student's lab.py files under ``stage`` (the only student files the grader reads)."""
    lab_ids = {lab.id for lab in labs}
    subs, taken = [], set()
    for entry in sorted(submissions.iterdir(), key=lambda p: p.name):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir():
            files, problems = _from_folder(entry, lab_ids)
            name = entry.name
        elif entry.suffix.lower() == ".zip" and entry.is_file():
            files, problems = _from_zip(entry, lab_ids)
            name = entry.stem
        else:
            continue
        sub = Submission(safe_name(name, taken), problems=problems)
        for lab_id, data in files.items():
            dest = stage / sub.student / f"{lab_id}.py"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            sub.files[lab_id] = dest
        subs.append(sub)
    return subs


class Progress:
    """A one-line progress bar on stderr (only when it is a terminal, or when forced)."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.counts: dict[str, int] = {}
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()

    def update(self, status: str) -> None:
        with self.lock:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
            if not self.enabled:
                return
            width = 30
            filled = int(width * self.done / max(1, self.total))
            extra = " ".join(f"{k}:{v}" for k, v in sorted(self.counts.items()) if k != "ok")
            line = (f"grading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                    f"{time.monotonic() - self.started:5.1f}s {extra}")
            if self.tty:
                sys.stderr.write("\r" + line + ("\n" if self.done == self.total else ""))
            elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
                sys.stderr.write(line + "\n")
            sys.stderr.flush()


@dataclass
class Summary:
    students: int
    lab_runs: int
    seconds: float
    workers: int
    backend: str
    out: Path
    statuses: dict[str, int]
    students_timed_out: int
    students_crashed: int
    percents: list[float]
    reference_problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.reference_problems and not self.statuses.get("grader-error")

    def distribution(self) -> list[tuple[str, int]]:
        buckets = [0] * 10
        for p in self.percents:
            buckets[min(9, int(p // 10))] += 1
        return [(f"{i * 10:3d}-{i * 10 + 9 if i < 9 else 100:3d}%", n) for i, n in enumerate(buckets)]

    def to_dict(self) -> dict:
        return {"students": self.students, "lab_runs": self.lab_runs, "seconds": round(self.seconds, 2),
                "workers": self.workers, "backend": self.backend, "statuses": self.statuses,
                "students_timed_out": self.students_timed_out, "students_crashed": self.students_crashed,
                "distribution": dict(self.distribution()),
                "mean_percent": round(statistics.mean(self.percents), 1) if self.percents else None,
                "median_percent": round(statistics.median(self.percents), 1) if self.percents else None,
                "reference_problems": self.reference_problems}

    def render(self) -> str:
        d = self.to_dict()
        rate = self.students / self.seconds * 60 if self.seconds else 0
        lines = [f"Graded {self.students} students ({self.lab_runs} lab runs) in {self.seconds:.1f} s "
                 f"with {self.workers} workers on {self.backend} ({rate:.1f} students/min)",
                 f"Timed out: {self.students_timed_out} students   Crashed: {self.students_crashed} students   "
                 f"Lab runs by status: " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())),
                 "Score distribution (percent of the maximum):"]
        top = max((n for _, n in self.distribution()), default=0) or 1
        for label, n in self.distribution():
            lines.append(f"  {label}  {'█' * round(20 * n / top):<20} {n}")
        if self.percents:
            lines.append(f"  mean {d['mean_percent']}%, median {d['median_percent']}%")
        for p in self.reference_problems:
            lines.append(f"WARNING: {p}")
        lines.append(f"Written: {self.out}/grades.csv, feedback/, gradescope/, junit/, summary.json")
        return "\n".join(lines)


def _missing(reference: LabResult) -> LabResult:
    tests = [TestResult(name=x.name, visibility=x.visibility, points=0.0, max_points=x.max_points,
                        outcome="failed", hint=None, message="no lab.py handed in") for x in reference.tests]
    return LabResult(reference.lab, "missing", tests, backend=reference.backend, message="no lab.py handed in")


def grade(submissions: Path, out: Path, *, labs: list[str] | None = None, lang: str = "en",
          backend: str = "auto", workers: int | None = None, limits: Limits | None = None,
          progress: bool = True, root: Path | None = None) -> Summary:
    started = time.monotonic()
    submissions, out = submissions.resolve(), out.resolve()
    if not submissions.is_dir():
        raise LabError(f"{submissions} is not a folder")
    all_labs = [find_lab(x, root) for x in labs] if labs else discover(root)
    if not all_labs:
        raise LabError("no labs to grade")
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("feedback", "gradescope", "junit"):
        shutil.rmtree(out / sub, ignore_errors=True)
    work = make_run_dir("course-grading-")
    stage = work / "stage"
    stage.mkdir(mode=0o700)
    hide = (str(paths.ROOT), str(submissions), str(out), str(stage))
    if root:
        hide += (str(Path(root).resolve()),)
    workers = workers or os.cpu_count() or 2
    try:
        subs = collect(submissions, stage, all_labs)

        local = threading.local()
        forkservers: list[ForkServer] = []

        def run(lab: Lab, file: Path) -> LabResult:
            if not hasattr(local, "forkserver"):  # one per worker thread, reused by its runs
                local.forkserver = ForkServer()
                forkservers.append(local.forkserver)
            lim = limits or Limits(call_timeout_s=lab.timeout_s)
            return run_lab(lab, file, visibility=("public", "hidden"), backend=backend, limits=lim, hide=hide,
                           forkserver=local.forkserver)

        reference: dict[str, LabResult] = {}
        problems: list[str] = []
        with ThreadPoolExecutor(workers) as pool:
            # the reference runs go first in the queue, the students right behind them: no core waits
            refs = {pool.submit(run, lab, lab.solution_file): lab for lab in all_labs if lab.solution_file.exists()}
            jobs = [(s, lab) for s in subs for lab in all_labs if lab.id in s.files]
            bar = Progress(len(jobs), progress)
            results: dict[tuple[str, str], LabResult] = {}
            futures = {pool.submit(run, lab, s.files[lab.id]): (s, lab) for s, lab in jobs}
            for fut in as_completed(refs):
                lab = refs[fut]
                reference[lab.id] = res = fut.result()
                if res.status != "ok" or res.points != res.max_points or not res.tests:
                    problems.append(f"{lab.id}: the reference solution scores {res.points:g}/{res.max_points:g} "
                                    f"({res.status}) on this backend; check the lab before trusting its grades")
            for fut in as_completed(futures):
                s, lab = futures[fut]
                try:
                    res = fut.result()
                except Exception as exc:  # noqa: BLE001 - one broken run must not stop the batch
                    res = LabResult(lab.id, "grader-error", message=f"{type(exc).__name__}: {exc}")
                results[(s.student, lab.id)] = res
                bar.update(res.status)
        for fs in forkservers:
            fs.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows, statuses, percents = [], {}, []
    timed_out = crashed = 0
    used_backend = next((r.backend for r in reference.values() if r.backend), backend)
    for s in subs:
        per_student = []
        for lab in all_labs:
            res = results.get((s.student, lab.id))
            if res is None:
                ref = reference.get(lab.id)
                res = _missing(ref) if ref else LabResult(lab.id, "missing", message="no lab.py handed in")
            if s.problems and res.status == "missing":
                res.message += "\n" + "\n".join(s.problems)
            per_student.append((lab, res))
            rows.append((s.student, res))
            statuses[res.status] = statuses.get(res.status, 0) + 1
        write_student(out, s.student, per_student, lang)
        timed_out += any(r.status == "timeout" or any(x.event == "timeout" for x in r.tests) for _, r in per_student)
        crashed += any(r.status in ("crash", "import-error") or any(x.event == "crash" for x in r.tests)
                       for _, r in per_student)
        total = sum(r.max_points for _, r in per_student)
        percents.append(100 * sum(r.points for _, r in per_student) / total if total else 0.0)
    write_csv(out / "grades.csv", rows)
    summary = Summary(students=len(subs), lab_runs=len(results), seconds=time.monotonic() - started, workers=workers,
                      backend=used_backend, out=out, statuses=statuses, students_timed_out=timed_out,
                      students_crashed=crashed, percents=percents, reference_problems=problems)
    (out / "summary.json").write_text(json.dumps(summary.to_dict(), indent=1), encoding="utf-8")
    return summary
