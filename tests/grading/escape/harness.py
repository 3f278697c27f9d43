"""Canaries, grading runs and the evidence they leave, for the black-box red-team suite.

Everything this module starts lives under /tmp/escape-<hex>/ (and one canary file beside the
checkout), every key it writes on the shared Redis is under escape:<hex>:, and ``cleanup()`` removes
all of it, kills (by pid) whatever the runs left behind and deletes the ordinary user it created.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import redis

from . import attacks

ROOT = Path(__file__).resolve().parents[3]
HEX = os.environ.get("ESCAPE_HEX") or secrets.token_hex(6)
BASE = Path(f"/tmp/escape-{HEX}")
LAB = "00-demo"
SECRET_RE = re.compile(rf"ESCSECRET{HEX}_([A-Za-z0-9]+)_[A-Za-z0-9]+")
SHARED = ("127.0.0.1", 6379)
SLEEP_MARKER = "17.%d" % (int(HEX[:6], 16) + 100000)  # /bin/sleep takes fractional seconds
COMM_MARKER = "esc" + HEX[:8]
SYS_PYTHON = "/usr/bin/python3"
GRADE_TIMEOUT = 240
COMMON_PORTS = [
    22,
    25,
    53,
    80,
    443,
    631,
    3000,
    3306,
    4369,
    5000,
    5432,
    5672,
    6379,
    6380,
    8000,
    8080,
    8888,
    9000,
    9200,
    11211,
    15672,
    25672,
    27017,
]


def secret(kind: str) -> str:
    return f"ESCSECRET{HEX}_{kind}_{secrets.token_hex(8)}"


def shared_redis() -> redis.Redis:
    return redis.Redis(*SHARED, socket_timeout=5, decode_responses=True)


def functions_of_starter(lab: str = LAB) -> list[str]:
    import ast

    tree = ast.parse((ROOT / "labs" / lab / "starter.py").read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree_digest(folder: Path, skip=("__pycache__",)) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for f in filenames:
            p = Path(dirpath, f)
            try:
                out[str(p.relative_to(folder))] = (
                    hashlib.sha256(p.read_bytes()).hexdigest() if not p.is_symlink() else "link:" + os.readlink(p)
                )
            except OSError as e:
                out[str(p.relative_to(folder))] = "error:" + type(e).__name__
    return out


def tree_stat(folder: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for f in filenames:
            p = os.path.join(dirpath, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if "__pycache__" in p:
                continue
            out[p] = (st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid)
    return out


# ------------------------------------------------------------------ the other student

OTHER_STUDENT = r"""
import os, signal, sys, time
log = sys.argv[1]
def note(sig, frame):
    with open(log, "a") as f:
        f.write("signal %d\n" % sig)
for s in range(1, 32):
    if s not in (signal.SIGKILL, signal.SIGSTOP):
        try:
            signal.signal(s, note)
        except (OSError, ValueError, RuntimeError):
            pass
end = time.monotonic() + 900
while time.monotonic() < end:
    time.sleep(0.2)
"""


@dataclass
class Canaries:
    """Everything planted before one grading run, and the check of each afterwards."""

    run: Path
    home: Path
    owner: int | None = None
    course: Path = ROOT
    secrets: dict = field(default_factory=dict)
    atimes: dict = field(default_factory=dict)
    procs: list = field(default_factory=list)

    def plant(self) -> "Canaries":
        self.run.mkdir(parents=True, exist_ok=True)
        s = self.secrets
        for k in ("beside", "home", "ssh", "env", "shared", "procargv", "procenv", "otherredis", "peer", "out"):
            s[k] = secret(k)
        # a file beside the checkout, and files in the instructor's home
        self.beside = ROOT.parent / f"escape-{HEX}-canary.txt"
        self.beside.write_text(s["beside"] + "\n")
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / ".ssh").mkdir(exist_ok=True)
        self.home_files = [self.home / f"escape-{HEX}-canary.txt", self.home / ".ssh" / "id_rsa"]
        self.home_files[0].write_text(s["home"] + "\n")
        self.home_files[1].write_text(s["ssh"] + "\n")
        os.chmod(self.home_files[1], 0o600)
        if self.owner is not None:
            for p in [self.home, self.home / ".ssh", *self.home_files]:
                os.chown(p, self.owner, self.owner)
        for p in [self.beside, *self.home_files]:
            st = p.stat()
            os.utime(p, ns=(st.st_mtime_ns - 7200 * 10**9, st.st_mtime_ns))  # relatime: a read moves atime
            self.atimes[p] = p.stat().st_atime_ns
        # the drop folder: anything in it afterwards was written from inside a box
        self.drop = BASE / "drop"
        self.drop.mkdir(parents=True, exist_ok=True)
        os.chmod(self.drop, 0o1777)
        # a key on the shared Redis
        self.shared_key = f"escape:{HEX}:canary"
        r = shared_redis()
        r.set(self.shared_key, s["shared"], ex=3600)
        # another student's process and Redis
        other = BASE / "other"
        other.mkdir(exist_ok=True)
        os.chmod(other, 0o755)
        (other / "student.py").write_text(OTHER_STUDENT)
        self.signal_log = other / f"signals-{self.run.name}.log"
        env = {"PATH": "/usr/bin:/bin", "OTHER_STUDENT_SECRET": s["procenv"]}
        self.other_proc = subprocess.Popen(
            [SYS_PYTHON, str(other / "student.py"), str(self.signal_log), s["procargv"]],
            env=env,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(self.other_proc)
        self.other_port = free_port()
        self.other_sock = other / f"redis-{self.run.name}.sock"
        self.other_redis = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.other_port),
                "--bind",
                "127.0.0.1",
                "--unixsocket",
                str(self.other_sock),
                "--unixsocketperm",
                "777",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(other),
                "--protected-mode",
                "no",
            ],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(self.other_redis)
        c = None
        for _ in range(100):
            try:
                c = redis.Redis(unix_socket_path=str(self.other_sock), socket_timeout=2, decode_responses=True)
                c.ping()
                break
            except (redis.ConnectionError, FileNotFoundError):
                time.sleep(0.05)
        c.set("canary", s["otherredis"])
        self.other_conns = int(c.info("stats")["total_connections_received"])
        c.close()
        # the checkout
        self.src = tree_digest(self.course / "src")
        self.git_status = self._git_status()
        self.venv = tree_stat(self.course / ".venv" / "lib")
        self.started = time.time()
        return self

    def _git_status(self) -> str:
        return subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"], cwd=self.course, capture_output=True, text=True
        ).stdout

    def env(self) -> dict:
        return {self.env_name: self.secrets["env"]}

    @property
    def env_name(self) -> str:
        return f"ESCAPE_CANARY_{HEX}"

    def config(self, tag: str, peers: list[Path]) -> dict:
        """What an attack is told: where the canaries are (never what they hold)."""
        return {
            "hex": HEX,
            "tag": tag,
            "drop_dir": str(self.drop),
            "read_targets": [
                str(self.beside),
                *map(str, self.home_files),
                *map(str, peers),
                str(self.signal_log),
                str(ROOT / "labs" / LAB / "solution.py"),
                str(ROOT / "labs" / LAB / "tests"),
                str(self.run),
            ],
            "write_targets": [
                str(ROOT.parent),
                str(ROOT),
                str(ROOT / "src" / "redis_course"),
                str(self.home),
                str(self.drop),
                str(self.run),
                str(ROOT / ".venv"),
            ],
            "tcp_ports": COMMON_PORTS + [self.other_port],
            "redis_ports": [6379, 6380, self.other_port],
            "canary_redis_ports": [self.other_port],
            "unix_sockets": [str(self.other_sock)],
            "env_name": self.env_name,
            "canary_pids": [self.other_proc.pid, self.other_redis.pid],
            "sleep_marker": SLEEP_MARKER,
            "comm_marker": COMM_MARKER,
            "payload": attacks.PAYLOAD,
        }

    # -------------------------------------------------------------- after the run

    def check(self) -> list[str]:
        bad = []
        for p in [self.beside, *self.home_files]:
            try:
                st = p.stat()  # before reading it ourselves
                if st.st_atime_ns != self.atimes[p]:
                    bad.append(f"canary file {p} was read (atime moved)")
                if p.read_text().strip() not in self.secrets.values():
                    bad.append(f"canary file {p} changed")
                os.utime(p, ns=(st.st_mtime_ns - 7200 * 10**9, st.st_mtime_ns))
                self.atimes[p] = p.stat().st_atime_ns
            except OSError as e:
                bad.append(f"canary file {p}: {e}")
        r = shared_redis()
        try:  # OBJECT does not touch the key's access time; GET does, so it comes second
            idle = r.object("idletime", self.shared_key)
            if idle is not None and int(idle) + 3 < time.time() - self.started:
                bad.append(f"shared Redis canary key was accessed {idle} s ago, during the run")
        except redis.ResponseError:
            pass
        if r.get(self.shared_key) != self.secrets["shared"]:
            bad.append("shared Redis canary key changed or deleted")
        if self.other_proc.poll() is not None:
            bad.append(f"other student's process died (code {self.other_proc.returncode})")
        else:
            st = Path(f"/proc/{self.other_proc.pid}/status").read_text()
            if "TracerPid:\t0" not in st:
                bad.append("other student's process is being traced")
            if re.search(r"State:\s+[Tt]", st):
                bad.append("other student's process was stopped")
        if self.signal_log.exists():
            bad.append("other student's process got signals: " + self.signal_log.read_text().replace("\n", " "))
        if self.other_redis.poll() is not None:
            bad.append("other student's Redis died")
        else:
            try:
                c = redis.Redis(unix_socket_path=str(self.other_sock), socket_timeout=2, decode_responses=True)
                info = c.info()
                if c.get("canary") != self.secrets["otherredis"] or c.dbsize() != 1:
                    bad.append(f"other student's Redis changed: keys {c.keys('*')[:5]}")
                conns = int(info["total_connections_received"])
                if conns != self.other_conns + 1:
                    bad.append(f"other student's Redis got {conns - self.other_conns - 1} connection(s) during the run")
                if info.get("role") != "master" or int(info.get("connected_slaves", 0)):
                    bad.append("other student's Redis replication changed")
                self.other_conns = conns
                c.close()
            except (redis.RedisError, OSError) as e:
                bad.append(f"other student's Redis does not answer: {e}")
        src = tree_digest(self.course / "src")
        if src != self.src:
            changed = sorted(k for k in set(src) | set(self.src) if src.get(k) != self.src.get(k))
            bad.append("checkout src/ changed: " + ", ".join(changed[:8]))
        status = self._git_status()
        if status != self.git_status:
            bad.append("checkout files changed: " + status[:300])
        venv = tree_stat(self.course / ".venv" / "lib")
        if venv != self.venv:
            changed = sorted(k for k in set(venv) | set(self.venv) if venv.get(k) != self.venv.get(k))
            bad.append("venv changed: " + ", ".join(changed[:8]))
        left = sorted(os.listdir(self.drop))
        if left:
            bad.append("files written to the drop folder: " + ", ".join(left[:10]))
        return bad

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        self.beside.unlink(missing_ok=True)
        try:
            shared_redis().delete(self.shared_key)
        except redis.RedisError:
            pass


# ------------------------------------------------------------------ leftovers on the host


def _ended(pid: int) -> bool:
    """Every thread of ``pid`` is a zombie: it has ended.  Its first thread alone in state Z, with others
    running, is a live process (``pthread_exit`` in the main thread) that only looks ended."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        return bool(tasks) and all(
            Path(f"/proc/{pid}/task/{t}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z" for t in tasks
        )
    except OSError:
        return False


def host_leftovers(session_ids: set[int], env_secret: str, keep: set[int]) -> list[tuple[int, str]]:
    """Processes of the run that are still there: in its session, carrying its environment, or wearing
    an attack's marker.  A session's id is its leader's pid, the grading command, already reaped: the
    kernel does not give that number to a new process while any process is still in the session, so
    where a process has it again, the session is empty and that number is another session's now
    (another worker's box, on a machine with pid_max 32768).  A zombie has ended and holds nothing: it
    waits for its parent (the machine's init, for an orphan, on its own time) to read its exit status;
    a process whose first thread ended while others run looks like one, and is not (:func:`_ended`)."""
    session_ids = {s for s in session_ids if not os.path.exists(f"/proc/{s}")}
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in keep or int(d) == os.getpid():
            continue
        pid = int(d)
        try:
            if _ended(pid):
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            sid = os.getsid(pid)
        except (OSError, ProcessLookupError):
            continue
        try:
            envb = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            envb = b""
        if sid in session_ids or SLEEP_MARKER in cmd or comm == COMM_MARKER or env_secret.encode() in envb:
            out.append((pid, f"{comm}: {cmd[:120]}"))
    return out


def host_files() -> list[str]:
    """Files an attack left on the host (outside /tmp/escape-<hex>/, where the runs live)."""
    out = []
    for d in [
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/run",
        "/run/lock",
        "/root",
        "/home",
        "/work",
        str(ROOT.parent),
        str(ROOT),
        str(ROOT / "src" / "redis_course"),
        "/dev/mqueue",
    ]:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            if p == str(BASE):
                continue
            if f"escape-{HEX}" in n and not n.endswith("-canary.txt"):
                out.append(p)
            elif n in ("results.json", "report.json", "results.fifo", "score.json", "reply.json") and os.path.islink(p):
                out.append(p)
    try:
        key = "%d" % int(HEX[:7], 16)
        for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]:
            if line.split()[0] == key:
                out.append("sysv-shm:" + key)
    except OSError:
        pass
    return out


def remove_host_files(paths: list[str]) -> None:
    for p in paths:
        if p.startswith("sysv-shm:"):
            subprocess.run(["ipcrm", "-M", p.split(":")[1]], capture_output=True)
            continue
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
        except OSError:
            pass


def kill_pids(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# ------------------------------------------------------------------ grading runs


@dataclass
class Outcome:
    path: str
    backend: str
    students: dict  # name -> kind ("honest" or an attack)
    code: int | None = None
    seconds: float = 0.0
    stdout: bytes = b""
    stderr: bytes = b""
    out: Path | None = None
    rows: dict = field(default_factory=dict)  # student -> row of grades.csv
    csv_text: str = ""
    canary_problems: list = field(default_factory=list)
    leftovers: list = field(default_factory=list)
    files_left: list = field(default_factory=list)
    found: dict = field(default_factory=dict)  # secret kind -> where
    reports: dict = field(default_factory=dict)  # tag -> list of shared-Redis / drop reports
    feedback: dict = field(default_factory=dict)  # student -> feedback text
    ended: float = 0.0
    secrets: dict = field(default_factory=dict)

    def text_of(self, student: str) -> str:
        return self.feedback.get(student, "")


def _scan_secrets(blob: bytes, where: str, found: dict) -> None:
    for m in SECRET_RE.finditer(blob.decode("utf-8", "replace")):
        found.setdefault(m.group(1), []).append(where)


def student_folder_name(name: str) -> str:
    return name


def build_batch(run: Path, can: Canaries, students: dict, functions: list[str], lab: str = LAB) -> Path:
    subs = run / "subs"
    subs.mkdir(parents=True, exist_ok=True)
    peers = []
    for name, kind in students.items():
        if kind == "honest":
            f = subs / name / lab / "lab.py"
            f.parent.mkdir(parents=True)
            f.write_text((ROOT / "labs" / lab / "solution.py").read_text() + f"\n# {can.secrets['peer']}\n")
            peers.append(f)
    for name, kind in students.items():
        if kind != "honest":
            f = subs / name / lab / "lab.py"
            f.parent.mkdir(parents=True)
            f.write_text(attacks.build(kind, can.config(kind, peers), functions))
    return subs


def collect(o: Outcome, can: Canaries, session_ids: set[int]) -> Outcome:
    """Evidence after a run: scores, every file of the results, the shared Redis, the drop folder."""
    found: dict = {}
    _scan_secrets(o.stdout, "grader stdout", found)
    _scan_secrets(o.stderr, "grader stderr", found)
    if o.out and o.out.exists():
        for p in o.out.rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                _scan_secrets(data, f"results/{p.relative_to(o.out)}", found)
        g = o.out / "grades.csv"
        if g.exists():
            o.csv_text = g.read_text(encoding="utf-8-sig")
            for row in csv.DictReader(io.StringIO(o.csv_text)):
                if csv_plain(row.get("lab", "")) == LAB:
                    o.rows[name_key(row["student"])] = row
        for f in (o.out / "feedback").glob("*.md") if (o.out / "feedback").exists() else []:
            o.feedback[f.stem] = f.read_text(errors="replace")
    r = shared_redis()
    for k in r.scan_iter(f"escape:{HEX}:found:*", count=1000):
        v = r.get(k) or ""
        _scan_secrets(v.encode(), f"shared Redis {k}", found)
        tag = k.split(":")[3] if k.count(":") >= 4 else "probe"
        o.reports.setdefault(tag, []).append(v)
        r.delete(k)
    for f in sorted(can.drop.iterdir()):
        data = f.read_bytes()[: 1 << 20]
        _scan_secrets(data, f"drop/{f.name}", found)
        o.reports.setdefault(f.name.split("-")[0] if not f.name.startswith("report-") else "probe", []).append(
            data.decode(errors="replace")
        )
    for where in list(found.get("out", [])):  # the grader may name its own results folder
        if where.startswith(("grader std", "results/")):
            found["out"].remove(where)
    o.found = {k: v for k, v in found.items() if v}
    o.secrets = dict(can.secrets)
    time.sleep(2)  # a daemon that outlives the run has had time to say so
    o.leftovers = host_leftovers(session_ids, can.secrets["env"], keep={p.pid for p in can.procs})
    o.files_left = host_files()
    o.canary_problems = can.check()
    for f in list(can.drop.iterdir()):
        f.unlink()
    kill_pids([p for p, _ in o.leftovers])
    remove_host_files(o.files_left)
    for k in r.scan_iter(f"escape:{HEX}:found:*", count=1000):  # a daemon's last word
        o.reports.setdefault(k.split(":")[3], []).append(r.get(k) or "")
        r.delete(k)
    return o


def run_command(
    cmd: list[str], cwd: Path, env: dict, user: pwd.struct_passwd | None = None, timeout: float = GRADE_TIMEOUT
) -> tuple[int | None, bytes, bytes, float, int]:
    started = time.monotonic()
    kw = {}
    if user is not None:
        kw = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        **kw,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    return code, out[: 64 << 20], err[: 64 << 20], time.monotonic() - started, proc.pid


def base_env(can: Canaries, home: Path, python_dir: str | None = None) -> dict:
    path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    if python_dir:
        path = python_dir + ":" + path
    env = {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", "TERM": "xterm-256color", "PYENV_ROOT": "/root/.pyenv"}
    env.update(can.env())
    return env


def base_python() -> str:
    """The Python the checkout's venv was made from (run.py runs under any 3.11+)."""
    return getattr(sys, "_base_executable", sys.executable)


def grade(
    path: str,
    backend: str,
    students: dict,
    *,
    course_root: Path = ROOT,
    python: str | None = None,
    user: pwd.struct_passwd | None = None,
    extra: tuple = (),
) -> Outcome:
    run = BASE / f"{path}-{backend}"
    if run.exists():
        shutil.rmtree(run)
    home = run / "home"
    can = Canaries(run=run, home=home, owner=user.pw_uid if user else None, course=course_root).plant()
    try:
        subs = build_batch(run, can, students, functions_of_starter())
        out = run / can.secrets["out"]
        for p in [run, subs]:
            os.chmod(p, 0o755)
        if user is not None:
            subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(subs)], check=True)
            os.chown(run, user.pw_uid, user.pw_gid)
        cmd = [
            python or base_python(),
            "run.py",
            "grade",
            str(subs),
            "--out",
            str(out),
            "--lab",
            LAB.split("-")[0],
            "--backend",
            backend,
            "--no-progress",
            "--call-timeout",
            "5",
            "--lab-budget",  # the hang attack: two calls' timeouts, then the budget ends its run; room
            "12",  # enough, on a loaded machine, for the module load and the memory attack's first report
            "--box-cpus",  # the attacks that spin burn half a core each, not a whole one
            "0.5",
            "--workers",
            "3",
            *extra,
        ]
        code, so, se, secs, pid = run_command(cmd, course_root, base_env(can, home), user=user)
        o = Outcome(
            path=path,
            backend=backend,
            students=students,
            code=code,
            seconds=secs,
            stdout=so,
            stderr=se,
            out=out,
            ended=time.time(),
        )
        return keep(collect(o, can, {pid}))
    finally:
        can.stop()


def keep(o: Outcome) -> Outcome:
    """With ESCAPE_KEEP=DIR, keep each run's evidence there (for the report table)."""
    d = os.environ.get("ESCAPE_KEEP")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
        name = f"{o.path}-{o.backend}-{'-'.join(sorted(set(o.students.values())))[:40]}"
        Path(d, name + ".json").write_text(
            json.dumps(
                {
                    "code": o.code,
                    "seconds": o.seconds,
                    "rows": o.rows,
                    "found": o.found,
                    "reports": o.reports,
                    "canary_problems": o.canary_problems,
                    "leftovers": o.leftovers,
                    "files_left": o.files_left,
                    "stdout_tail": o.stdout[-3000:].decode(errors="replace"),
                    "stderr_tail": o.stderr[-3000:].decode(errors="replace"),
                    "feedback": {k: v[:6000] for k, v in o.feedback.items()},
                },
                indent=1,
                ensure_ascii=False,
            )
        )
        if o.out and o.out.exists():
            shutil.copytree(
                o.out, Path(d, name + "-results"), dirs_exist_ok=True, ignore=shutil.ignore_patterns("logs")
            )
    return o


# ------------------------------------------------------------------ the ordinary user and copies of the course


def make_course_venv(dest: Path) -> None:
    """A venv for ``dest`` made from Debian's /usr/bin/python3 (readable by every user; the checkout's venv
    points into /root/.pyenv, mode 0700), its packages hard-linked from the checkout's venv (read-only to
    anyone but root) and the course installed from ``dest/src``, with the stamp run.py expects."""
    venv = dest / ".venv"
    subprocess.run([SYS_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    src_site = ROOT / ".venv" / "lib" / "python3.11" / "site-packages"
    site = venv / "lib" / "python3.11" / "site-packages"
    for entry in src_site.iterdir():
        target = site / entry.name
        if entry.name.startswith("__editable__") or entry.name.endswith(".pth"):
            target.write_text(entry.read_text().replace(str(ROOT), str(dest)))
        elif entry.is_dir():
            subprocess.run(["cp", "-al", str(entry), str(target)], check=True)
        else:
            os.link(entry, target)
    # redis-py needs async-timeout before Python 3.11.3 (Debian has 3.11.2); the locks were made on 3.11.7
    subprocess.run(
        [
            str(ROOT / ".venv" / ".uv" / "bin" / "uv"),
            "pip",
            "install",
            "--quiet",
            "--python",
            str(venv / "bin" / "python"),
            "async-timeout",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (venv / "bin" / "course").write_text(
        f"#!{venv}/bin/python\nimport sys\nfrom redis_course.cli import main\nif __name__ == '__main__':\n"
        "    sys.exit(main())\n"
    )
    os.chmod(venv / "bin" / "course", 0o755)
    version = subprocess.run(
        [SYS_PYTHON, "-c", "import sys; print(sys.version, end='')"], capture_output=True, text=True, check=True
    ).stdout
    digest = hashlib.sha256((dest / "requirements" / "all.txt").read_bytes() + version.encode()).hexdigest()
    (venv / ".course-installed").write_text(json.dumps({"set": "all", "lock": digest, "bytecode": True}))


def copy_checkout(dest: Path) -> None:
    shutil.copytree(
        ROOT,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "site", "node_modules", ".cache"),
    )


def make_user() -> pwd.struct_passwd:
    name = "esc" + HEX[:8]
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--no-create-home", "--home-dir", str(BASE / "nohome"), "--shell", "/bin/sh", name],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(name)


def remove_user() -> None:
    name = "esc" + HEX[:8]
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    uid = pwd.getpwnam(name).pw_uid
    for d in os.listdir("/proc"):  # only this suite's own user's processes, by pid
        try:
            if d.isdigit() and os.stat(f"/proc/{d}").st_uid == uid:
                os.kill(int(d), signal.SIGKILL)
        except OSError:
            pass
    subprocess.run(["userdel", name], capture_output=True)


def cleanup() -> None:
    r = shared_redis()
    for k in r.scan_iter(f"escape:{HEX}:*", count=1000):
        r.delete(k)
    kill_pids([p for p, _ in host_leftovers(set(), "\0never\0", keep=set())])
    remove_user()
    remove_host_files(host_files())
    (ROOT.parent / f"escape-{HEX}-canary.txt").unlink(missing_ok=True)
    shutil.rmtree(BASE, ignore_errors=True)


# ------------------------------------------------------------------ reading what came back


def probe_report(o: Outcome, student: str) -> dict:
    """The probe's report: from the shared Redis or the drop folder when they were reachable, else from
    the exception message in the feedback (parsed leniently: it may be cut or escaped)."""
    reached, found = set(), {}
    for v in o.reports.get("probe", []):
        try:
            d = json.loads(v)
            reached |= set(d.get("reached", []))
            found.update(d.get("found", {}))
        except ValueError:
            pass
    text = o.text_of(student) + o.stdout.decode(errors="replace")
    for m in re.finditer(r"ESCAPE-REPORT (\{.*)", text):
        frag = m.group(1).replace("\\|", "|").replace("&quot;", '"')
        try:
            d = json.loads(frag[: frag.rfind("}") + 1])
            reached |= set(d.get("reached", []))
            found.update(d.get("found", {}))
            continue
        except ValueError:
            pass
        # cut: take every complete quoted item
        for sec, route in re.findall(r'"(ESCSECRET[A-Za-z0-9_]+)": "([^"]+)"', frag):
            found.setdefault(sec, route)
        for part in re.findall(r'"reached": \[([^\]]*)', frag):
            reached |= set(re.findall(r'"([^"]+)"(?=[,\]]|$)', part + "]"))
    return {"reached": sorted(reached), "found": found}


def attack_values(o: Outcome, tag: str, student: str, pattern: str) -> list[str]:
    """What a bounded attack said it managed: its reports, and its message in the feedback."""
    vals = []
    for v in o.reports.get(tag, []):
        try:
            vals.append(json.dumps(json.loads(v).get("value")))
        except ValueError:
            pass
    vals += re.findall(pattern, o.text_of(student) + o.stdout.decode(errors="replace"))
    return vals


def csv_plain(cell: str) -> str:
    """A cell as the course's own reader reads it back (the marks that keep a formula from starting)."""
    from redis_course.labs.grading.report import csv_uncell

    return csv_uncell(cell)


def name_key(name: str) -> str:
    """A student's name with what no gradebook shows as it is (controls, bidi marks, the replacement
    character they become) left out: the same key for a folder name and for its row."""
    return re.sub(
        r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffd]", "", csv_plain(name)
    )


def csv_formula_cells(text: str) -> list[str]:
    bad = []
    for delim in (",", ";", "\t"):
        for row in csv.reader(io.StringIO(text), delimiter=delim):
            for cell in row:
                stripped = cell.lstrip(" \t\r\n\"'")
                if cell and cell[0] in "=+-@\t\r" and not cell.startswith("'"):
                    bad.append(f"[{delim!r}] {cell[:40]!r}")
                elif stripped != cell and stripped[:1] in ("=", "+", "@") and not cell.startswith("'"):
                    bad.append(f"[{delim!r}] {cell[:40]!r}")
    return bad


CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def xml_ok(p: Path) -> str | None:
    try:
        ET.parse(p)
    except ET.ParseError as e:
        return str(e)
    return None
