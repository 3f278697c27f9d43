"""Black-box red team of the grader: every attack in attacks.py, on every grading path and backend.

Each path grades one batch (honest students, solution.py with a canary comment, before, beside and
after every attack) once per backend; the tests then read what that batch left: the canaries
planted before it (harness.Canaries), the results folder, the shared Redis under escape:<hex>:, the
drop folder, the host's processes and files.  A test that fails here names what an attack reached.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import pytest

from . import attacks
from . import harness as h

pytestmark = pytest.mark.slow

BACKENDS = ["fakeredis", "redis-server"]
TEXT_NAME = "13-text=1+1;@SUM(1)\u202e\x1b]52;c;ZXNj\x07\x1b[31m"
ROOT_BATCH = {
    "00-honest": "honest",
    "01-probe": "probe",
    "02-forkbomb": "forkbomb",
    "03-honest": "honest",
    "04-diskfill": "diskfill",
    "05-memory": "memory",
    "06-honest": "honest",
    "07-flood": "flood",
    "08-serverkill": "serverkill",
    "09-honest": "honest",
    "10-hang": "hang",
    "11-daemon": "daemon",
    "12-honest": "honest",
    TEXT_NAME: "textinject",
    "14-tamper": "tamper",
    "15-baseline": "baseline",
    "16-honest": "honest",
}
USER_BATCH = {
    "00-honest": "honest",
    "01-probe": "probe",
    "03-honest": "honest",
    "11-daemon": "daemon",
    "16-honest": "honest",
}
CHECK_ATTACKS = ["probe", "daemon", "textinject"]
# what a probe may report without it being an escape: hooks it can see in its own interpreter (the
# tamper attack measures whether they matter), and a command or script that did not return in time
HARMLESS = ("tamperable:", "cmds-hung", "lua-hung-at:")

_OUTCOMES: dict = {}


@pytest.fixture(scope="session", autouse=True)
def escape_cleanup():
    """What this process's runs left (its HEX's keys, user, files): each xdist worker cleans its own."""
    yield
    h.cleanup()


def outcome(path: str, backend: str) -> h.Outcome:
    key = (path, backend)
    if key not in _OUTCOMES:
        _OUTCOMES[key] = RUNNERS[path](backend)
    return _OUTCOMES[key]


# ------------------------------------------------------------------ the paths


def run_root(backend: str) -> h.Outcome:
    return h.grade("root", backend, ROOT_BATCH)


_USER: dict = {}


def _user_course():
    """A copy of the checkout an ordinary user owns, with a venv from Debian's Python."""
    if not _USER:
        user = h.make_user()
        dest = h.BASE / "user-course"
        h.copy_checkout(dest)
        h.make_course_venv(dest)
        subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(dest)], check=True)
        # the packages stay root's (hard links into the checkout's venv): give back only the venv's own files
        site = dest / ".venv" / "lib" / "python3.11" / "site-packages"
        subprocess.run(["chown", "-R", "root:root", str(site)], check=True)
        for d in (h.BASE, dest.parent):
            os.chmod(d, 0o755)
        _USER.update(user=user, dest=dest)
    return _USER["user"], _USER["dest"]


def run_user(backend: str) -> h.Outcome:
    user, dest = _user_course()
    return h.grade("user", backend, USER_BATCH, course_root=dest, python=h.SYS_PYTHON, user=user)


_EDITION: dict = {}


def _edition():
    """The student edition, as a student gets it, with its own venv."""
    if not _EDITION:
        dest = h.BASE / "edition"
        code = subprocess.run(
            [h.base_python(), "run.py", "release", str(dest)],
            cwd=h.ROOT,
            capture_output=True,
            timeout=180,
            env=dict(os.environ),
        )
        assert code.returncode == 0, code.stderr.decode()[-2000:]
        h.make_course_venv(dest)
        _EDITION["dest"] = dest
    return _EDITION["dest"]


def run_check(backend: str) -> dict:
    """``course check 00`` in the student edition, once per attack, with the attack as the student's
    own labs/00-demo/lab.py.  Returns attack -> Outcome."""
    dest = _edition()
    out = {}
    for kind in CHECK_ATTACKS:
        run = h.BASE / f"check-{backend}-{kind}"
        shutil.rmtree(run, ignore_errors=True)
        can = h.Canaries(run=run, home=run / "home", course=dest).plant()
        try:
            lab = dest / "labs" / h.LAB / "lab.py"
            lab.write_text(attacks.build(kind, can.config(kind, []), h.functions_of_starter()))
            env = h.base_env(can, run / "home")
            code, so, se, secs, pid = h.run_command(
                [h.SYS_PYTHON, "run.py", "check", "00", "--backend", backend, "--verbose"], dest, env, timeout=120
            )
            o = h.Outcome(
                path="check",
                backend=backend,
                students={kind: kind},
                code=code,
                seconds=secs,
                stdout=so,
                stderr=se,
                out=None,
                ended=time.time(),
            )
            o.feedback[kind] = so.decode(errors="replace")
            out[kind] = h.keep(h.collect(o, can, {pid}))
        finally:
            can.stop()
    return out


def run_gradescope(backend: str) -> dict:
    """The Gradescope autograder zip's run_autograder, with the probe handed in as lab.py."""
    root = h.BASE / "gradescope"
    shutil.rmtree(root, ignore_errors=True)
    (root / "submission").mkdir(parents=True)
    z = h.BASE / "autograder-00.zip"
    if not z.exists():
        r = subprocess.run(
            [h.base_python(), "run.py", "gradescope", "00", "--out", str(z)],
            cwd=h.ROOT,
            capture_output=True,
            timeout=180,
        )
        assert r.returncode == 0, r.stderr.decode()[-2000:]
    subprocess.run(["unzip", "-q", str(z), "-d", str(root / "source")], check=True)
    out = {}
    for kind in ("probe",):
        can = h.Canaries(run=root / "run", home=root / "home").plant()
        try:
            (root / "submission" / "lab.py").write_text(
                attacks.build(kind, can.config(kind, []), h.functions_of_starter())
            )
            (root / "results").mkdir(exist_ok=True)
            env = h.base_env(can, root / "home")
            env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=str(h.ROOT / ".venv" / "bin" / "python"))
            code, so, se, secs, pid = h.run_command([str(root / "source" / "run_autograder")], root, env, timeout=180)
            o = h.Outcome(
                path="gradescope",
                backend=backend,
                students={kind: kind},
                code=code,
                seconds=secs,
                stdout=so,
                stderr=se,
                out=root / "results",
                ended=time.time(),
            )
            res = root / "results" / "results.json"
            o.feedback[kind] = res.read_text(errors="replace") if res.exists() else ""
            out[kind] = h.keep(h.collect(o, can, {pid}))
        finally:
            can.stop()
    return out


RUNNERS = {"root": run_root, "user": run_user, "check": run_check, "gradescope": run_gradescope}
GRADE_PATHS = [(p, b) for p in ("root", "user") for b in BACKENDS]


def batch_of(path: str) -> dict:
    return ROOT_BATCH if path == "root" else USER_BATCH


def student_of(batch: dict, kind: str) -> str:
    return next(n for n, k in batch.items() if k == kind)


# ------------------------------------------------------------------ verdicts per attack


def _mine(where: str, student: str, kind: str, single: bool) -> bool:
    if single:
        return True
    fname = re.sub(r'[/\\:*?"<>|\x00-\x1f\x7f-\x9f]', "_", student)
    return (
        f"/{fname}." in where
        or f"/{fname}/" in where
        or f":found:{kind}:" in where
        or where.startswith(f"drop/{kind}-")
        or (kind == "probe" and where.startswith(("drop/report-", "drop/lua-server-")))
    )


def found_by(o: h.Outcome, student: str, kind: str) -> list[str]:
    """Canary secrets that came back through a channel this student controls: its own feedback, JUnit
    and Gradescope files, reports tagged with its attack, or (check, Gradescope: one student) anywhere."""
    single = o.path in ("check", "gradescope")
    bad = []
    for secret_kind, wheres in o.found.items():
        mine = sorted({w for w in wheres if _mine(w, student, kind, single)})
        if mine:
            bad.append(f"read the {secret_kind} canary (seen in {mine[:3]})")
    return bad


def _own_space(reached: str) -> bool:
    """A write the probe made that did not land on this machine: the folder it wrote to (a /tmp, a
    folder made for a mount) was the box's own, so the probe's file is not there from outside."""
    if reached.startswith("write:"):
        return not (Path(reached[len("write:") :]) / f"escape-{h.HEX}-w-dir").exists()
    if reached.startswith("wrote:"):
        return not os.path.exists(reached[len("wrote:") :])
    return False


def verdict(o: h.Outcome, kind: str, student: str) -> list[str]:
    bad = []
    if o.path in ("root", "user") and h.name_key(student) not in o.rows:
        bad.append(f"no row in grades.csv for {student!r}")
    if kind == "probe":
        rep = h.probe_report(o, student)
        bad += [f"probe found {s} through {w}" for s, w in rep["found"].items()]
        bad += [f"probe reached {r}" for r in rep["reached"] if not r.startswith(HARMLESS) and not _own_space(r)]
        bad += found_by(o, student, kind)
    elif kind == "forkbomb":
        n = [int(x) for x in h.attack_values(o, "forkbomb", student, r"FORKBOMB started (\d+)") if x.isdigit()]
        if n and max(n) >= 1500:
            bad.append(f"started {max(n)} processes: no process limit below 1500")
    elif kind == "diskfill":
        for v in h.attack_values(o, "diskfill", student, r"DISKFILL (\{[^}]*\})"):
            try:
                d = json.loads(v)
            except ValueError:
                continue
            for folder, n in (d or {}).items():
                if n >= 1 << 30:
                    bad.append(f"wrote {n >> 20} MiB to {folder}: no disk limit below 1 GiB")
    elif kind == "memory":
        vals = h.attack_values(o, "memory", student, r"MEMORY (\{[^}]*\})")
        if not vals:  # killed by the call's time limit before it could say how far it got
            warnings.warn(f"memory attack on {o.path}/{o.backend}: inconclusive, it reported nothing")
        for v in vals:
            try:
                d = json.loads(v)
            except ValueError:
                continue
            if (d or {}).get("python_mib", 0) >= 3072:
                bad.append("allocated 3 GiB in the student process: no memory limit")
            if "setrange_mib" in (d or {}):
                bad.append("its Redis took a 512 MiB value with one SETRANGE (maxmemory checked before, not during)")
            if (d or {}).get("append_mib", 0) >= 256:
                bad.append("its Redis took 256 MiB with APPEND")
    elif kind == "flood":
        if o.out and o.out.exists():
            for p in o.out.rglob("*"):
                if p.is_file() and p.stat().st_size > (2 << 20):
                    bad.append(f"results/{p.relative_to(o.out)} is {p.stat().st_size >> 20} MiB")
        if len(o.stdout) + len(o.stderr) > (1 << 20):
            bad.append(f"the grader printed {(len(o.stdout) + len(o.stderr)) >> 20} MiB")
    elif kind == "daemon":
        late = []
        for v in o.reports.get("daemon", []):
            try:
                d = json.loads(v)
            except ValueError:
                continue
            if d.get("what") == "alive" and d.get("t", 0) > o.ended + 1:
                late.append(d["t"] - o.ended)
        if late:
            bad.append(f"a daemon was still alive {max(late):.0f} s after the run ended")
    elif kind == "textinject":
        bad += text_problems(o, student)
    elif kind == "tamper":
        base = o.rows.get(student_of(batch_of(o.path), "baseline"))
        mine = o.rows.get(student)
        if base and mine and int(mine["points"]) > int(base["points"]):
            bad.append(f"tampering inside its interpreter raised its score from {base['points']} to {mine['points']}")
    if kind != "probe":
        bad += found_by(o, student, kind)
    return bad


def text_problems(o: h.Outcome, student: str) -> list[str]:
    bad = []
    term = (o.stdout + o.stderr).decode("utf-8", "replace")
    for seq, what in (
        ("\x1b]52;", "OSC 52 (clipboard)"),
        ("\x1b[2J", "CSI clear screen"),
        ("\x1b[31m", "CSI colour"),
        ("\x9b", "C1 CSI"),
        ("\u202e", "bidi override"),
        ("\x07", "BEL"),
    ):
        if seq in term:
            bad.append(f"{what} from the student reached the terminal")
    if o.out and o.out.exists():
        if o.csv_text:
            bad += ["grades.csv formula cell " + c for c in h.csv_formula_cells(o.csv_text)]
            if h.CONTROL_RE.search(o.csv_text.replace("\r\n", "\n")):
                bad.append(
                    "grades.csv holds control or bidi characters: "
                    + repr(h.CONTROL_RE.findall(o.csv_text.replace("\r\n", "\n"))[:6])
                )
        for p in (o.out / "feedback").glob("*.md"):
            t = re.sub(r"(?ms)^```.*?^```", "", p.read_text(errors="replace"))  # fenced blocks are data
            if "\x1b" in p.read_text(errors="replace") or "\x9b" in p.read_text(errors="replace"):
                bad.append(f"feedback/{p.name} holds raw escape sequences (shown by cat, less -R, a terminal)")
            if re.search(r"(?m)^\| FORGED ROW", t):
                bad.append(f"feedback/{p.name}: student text made a table row")
            if re.search(r"(?m)^## FORGED HEADING", t):
                bad.append(f"feedback/{p.name}: student text made a heading")
            if "<script>" in t.replace("`<script>`", ""):
                bad.append(f"feedback/{p.name}: raw <script> outside a code block")
        for p in (o.out / "junit").glob("*.xml"):
            err = h.xml_ok(p)
            if err:
                bad.append(f"junit/{p.name} is not well-formed XML: {err}")
            elif 'name="forged"' in p.read_text(errors="replace") and "&lt;testcase" not in p.read_text(
                errors="replace"
            ):
                bad.append(f"junit/{p.name}: student text made a testcase")
        for p in (o.out / "gradescope").rglob("*.json"):
            try:
                d = json.loads(p.read_text())
            except ValueError as e:
                bad.append(f"gradescope/{p.relative_to(o.out / 'gradescope')} is not JSON: {e}")
                continue
            blob = json.dumps(d, ensure_ascii=False)
            if "\x1b" in blob:
                bad.append(f"gradescope/{p.parent.name}/results.json holds escape sequences")
    else:
        # check: everything went to the terminal, and the probe's text is checked above
        pass
    return bad


# ------------------------------------------------------------------ the tests


def group(path: str, backend: str):
    """The xdist group of one path's runs: the tests that read one batch's outcome run where it was
    graded, and the batches spread over the workers (the user path's two backends share its venv, the
    check path's its student edition; Gradescope is one run)."""
    return pytest.mark.xdist_group(f"escape-{path}" if path != "root" else f"escape-{path}-{backend}")


def _attack_params():
    out = []
    for path, backend in GRADE_PATHS:
        for name, kind in batch_of(path).items():
            if kind not in ("honest", "baseline"):
                out.append(
                    pytest.param(path, backend, kind, name, id=f"{kind}-{path}-{backend}", marks=group(path, backend))
                )
    for backend in BACKENDS:
        for kind in CHECK_ATTACKS:
            out.append(
                pytest.param("check", backend, kind, kind, id=f"{kind}-check-{backend}", marks=group("check", backend))
            )
    out.append(
        pytest.param(
            "gradescope", "redis-server", "probe", "probe", id="probe-gradescope", marks=group("gradescope", "")
        )
    )
    return out


@pytest.mark.parametrize("path,backend,kind,student", _attack_params())
def test_attack_is_contained(path, backend, kind, student):
    res = outcome(path, backend)
    o = res[kind] if isinstance(res, dict) else res
    problems = verdict(o, kind, student)
    assert not problems, f"{kind} on {path}/{backend} escaped:\n  " + "\n  ".join(problems)


def _run_params():
    ps = [pytest.param(p, b, id=f"{p}-{b}", marks=group(p, b)) for p, b in GRADE_PATHS]
    ps += [pytest.param("check", b, id=f"check-{b}", marks=group("check", b)) for b in BACKENDS]
    ps.append(pytest.param("gradescope", "redis-server", id="gradescope", marks=group("gradescope", "")))
    return ps


def _outcomes(path, backend):
    res = outcome(path, backend)
    return list(res.values()) if isinstance(res, dict) else [res]


@pytest.mark.parametrize("path,backend", _run_params())
def test_canaries_untouched(path, backend):
    """Every canary planted before the run is there, unread and unchanged; nothing of the run is left."""
    problems = []
    for o in _outcomes(path, backend):
        tag = ",".join(o.students.values()) if path in ("check", "gradescope") else "batch"
        problems += [f"[{tag}] {p}" for p in o.canary_problems]
        problems += [f"[{tag}] process left behind: {pid} {what}" for pid, what in o.leftovers]
        problems += [f"[{tag}] file left on the host: {f}" for f in o.files_left]
        if o.code is None:
            problems.append(f"[{tag}] the grading command did not end within {h.GRADE_TIMEOUT} s")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path,backend", [pytest.param(p, b, marks=group(p, b)) for p, b in GRADE_PATHS])
def test_honest_students_keep_their_marks(path, backend):
    o = outcome(path, backend)
    assert o.code == 0, f"grade ended with {o.code}: {o.stderr.decode(errors='replace')[-1500:]}"
    lost = []
    for name, kind in o.students.items():
        if kind != "honest":
            continue
        row = o.rows.get(name)
        if row is None:
            lost.append(f"{name}: no row")
        elif row["status"] != "ok" or row["points"] != row["max_points"]:
            lost.append(f"{name}: {row['points']}/{row['max_points']} ({row['status']})")
    assert not lost, "honest students lost points beside the attacks: " + "; ".join(lost)


LOOKS_ENDED = (
    "import ctypes, threading, time; threading.Thread(target=time.sleep, args=(30,)).start(); "
    "time.sleep(0.2); ctypes.CDLL(None).pthread_exit(None)"
)


def test_a_run_left_behind_is_found_by_its_session_and_a_reused_pid_or_a_zombie_is_not():
    """What a run's session leaves (its leader reaped, a child still there) is a leftover; a process that
    later got the leader's number, and its own session with it, is not (the number is free only once
    the session is empty); nor is a process of the run that has ended and waits to be reaped."""
    # the leader ends at once; its child becomes `sleep 30`, whose own child `/bin/true` ends unreaped
    left = subprocess.Popen(["sh", "-c", "(/bin/true & exec sleep 30) & exit 0"], start_new_session=True)
    left.wait()
    other = subprocess.Popen(["sleep", "30"], start_new_session=True)  # a session leader: sid == pid
    # a live process that looks ended: its first thread calls pthread_exit, a second one goes on
    hiding = subprocess.Popen(
        ["sh", "-c", f"{h.SYS_PYTHON} -c {shlex.quote(LOOKS_ENDED)} & exit 0"], start_new_session=True
    )
    hiding.wait()
    try:
        time.sleep(1.0)
        found = [what for _, what in h.host_leftovers({left.pid}, "\0never\0", keep=set())]
        assert [w for w in found if w.startswith("sleep")], f"the run's sleep was not found: {found}"
        assert not [w for w in found if w.startswith("true")], f"a process that has ended was reported: {found}"
        hid = h.host_leftovers({hiding.pid}, "\0never\0", keep=set())
        assert hid, "a process whose first thread ended while another runs was taken for ended"
        assert not h.host_leftovers({other.pid}, "\0never\0", keep=set()), (
            "a live session leader was taken for a leftover"
        )
    finally:
        h.kill_pids([p for p, _ in h.host_leftovers({left.pid, hiding.pid}, "\0never\0", keep=set())])
        other.kill()
        other.wait()
