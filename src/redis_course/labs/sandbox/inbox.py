"""What runs inside the box: its fork server, and every process it forks (the student's, or a task
of the grader's).

    python -I -S -c BOOT IMPORT_PATH CONTROL_FD       (the box's one command: :mod:`.box` starts it)

The fork server is the box's first process.  It imports redis, the course's client and sqlite3
once, marks itself non-dumpable (no other process of the box may trace it or read its memory or
descriptors), becomes the subreaper of everything the box starts, and then only answers the
grader, over a SOCK_SEQPACKET socket it inherited (no name: nothing else can connect to it):

* ``{"op": "spawn", "cfg": {...}}`` with three descriptors (requests, replies, output) → a new
  process → ``{"pid": <its pid in the box>}``.  The process sets its time zone, limits, output and
  Redis connection, then imports the student's module (``cfg["task"]`` absent) or serves one of the
  grader's tasks (:mod:`.tasks`: the ledger of lab 05, read from inside the box);
* ``{"op": "reap"}`` → every other process of the box killed, the work folder emptied → ``{"ok": n}``;
* ``{"op": "status", "pid": n}`` → how that process ended (``{"exit": code}``, negative: a signal),
  or ``{"exit": null}`` while it runs.

The processes it forks run the student's code, so nothing they send is trusted (see
:mod:`.process`).  Protocol of a student process (JSON lines): requests ``{"id", "fn", "args",
"kwargs"}`` on ``req_fd``; replies ``{"id", "ok": value}``, ``{"id", "error": {...}}`` or
``{"id", "crash": why}`` on ``resp_fd``; first line ``{"event": "ready"}`` or ``{"event":
"import_error", ...}``; a step of :func:`redis_course.lessons.faults.crash_point` is reported as
``{"id", "step": name}`` and waits for ``{"go": id}`` (the grader kills the process instead when it
armed that step).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import traceback

BOOT = (
    "import sys; sys.path[:0] = sys.argv[1].split(':'); "
    "from redis_course.labs.sandbox.inbox import main; main(int(sys.argv[2]))"
)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36


def _send(fd: int, obj: dict) -> None:
    data = (json.dumps(obj, allow_nan=False) + "\n").encode()
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _short(text: object, limit: int = 2000) -> str:
    try:
        s = str(text)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        s = "<unprintable>"
    return s if len(s) <= limit else s[:limit] + "…"


def _tb_tail(exc: BaseException, module_file: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == module_file]
    return "\n".join(f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-3:])[-1500:]


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


# ------------------------------------------------------------------ the fork server


def main(control_fd: int) -> None:
    """The fork server; its settings are the first message on its control socket (not its command
    line, which every process of the box can read)."""
    import socket

    sock = socket.socket(fileno=control_fd)
    cfg = json.loads(sock.recv(1 << 16))
    import sqlite3  # noqa: F401 - imported once here, inherited by every fork (lab 05's tasks)

    import redis_course.core.backend  # noqa: F401
    from redis_course.labs.sandbox import tasks  # noqa: F401
    from redis_course.lessons import faults  # noqa: F401

    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.makedirs(cfg["work"], exist_ok=True)
    ended: dict[int, int] = {}  # pid -> exit code of the processes it started (the last 1,000)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        try:
            req = json.loads(data)
        except ValueError:
            os._exit(0)
        _collect(ended)
        if req.get("op") in ("reap", "status"):
            for fd in fds:
                os.close(fd)
            if req["op"] == "reap":
                reply = {"ok": _reap(cfg)}
                _collect(ended)
            else:
                reply = {"exit": ended.get(req.get("pid"))}
            sock.send(json.dumps(reply).encode())
            continue
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                # dies with the fork server (outside bubblewrap no PID namespace ends it with the box)
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != server:
                    os._exit(70)
                sock.close()
                child = {**cfg, **req["cfg"], "req_fd": fds[0], "resp_fd": fds[1], "out_fd": fds[2]}
                run(child)
            except BaseException:  # noqa: BLE001
                pass
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        ended.pop(pid, None)
        sock.send(json.dumps({"pid": pid}).encode())


def _collect(ended: dict[int, int]) -> None:
    """Reap every ended child (its own and the orphans it adopted), keeping the exit codes."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ended[pid] = os.waitstatus_to_exitcode(status)
        while len(ended) > 1000:
            ended.pop(next(iter(ended)))


def _descendants() -> list[int]:
    """Every process below this one (a subreaper: orphans of the box are its children too)."""
    out, todo = [], [os.getpid()]
    while todo and len(out) < 100_000:
        p = todo.pop()
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(x) for x in f.read().split()]
                out += kids
                todo += kids
        except OSError:
            continue
    return out


def _reap(cfg: dict) -> int:
    """Kill every process of the box but this one, then empty the work folder (and, under
    bubblewrap, the box's /tmp and /dev/shm); how many were killed."""
    killed = 0
    for _ in range(200):
        if cfg.get("alone"):  # own PID namespace or own uid: every other process it may signal is the box's
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        pids = _descendants()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        _collect({})
    for folder in (cfg["work"], *cfg.get("scratch", [])):  # the box's own tmpfs: /tmp, /dev/shm
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(folder, entry)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass
    return killed


# ------------------------------------------------------------------ one process of the box


def run(cfg: dict) -> None:
    """A process of the box: its session, environment, limits and output, then the grader's task or
    the student's module, then one request after another."""
    sys.dont_write_bytecode = True
    if os.getsid(0) != os.getpid():
        os.setsid()
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    _environment(cfg)
    _limits(cfg)
    _redirect_output(cfg)
    os.chdir(cfg["work"])
    if cfg.get("task"):
        from redis_course.labs.sandbox import tasks

        _kernel_buffers(cfg)
        _send(cfg["resp_fd"], {"event": "ready"})
        _serve(cfg, tasks, None, step=None)
        return
    if cfg.get("clock_offset") and cfg.get("faketime") and not cfg.get("faked"):
        _exec_with_clock(cfg)  # never returns
    r = _connect(cfg)
    step = _grader_steps(cfg)
    if cfg.get("clock_offset") and not cfg.get("faked"):  # no libfaketime here: the interpreter's own clock
        from redis_course.labs.sandbox import clock

        clock.install()
        clock.set_machine_clock(cfg["clock_offset"])
    _kernel_buffers(cfg)
    # the fork server is not dumpable, and so is every process it forks: a student's process becomes
    # readable again to its own uid (the grader's memory watchdog reads its proportional set and
    # counts its descriptors); it holds nothing of the grader's, and a task of the grader's stays not
    # dumpable (no student process may trace it)
    _prctl(PR_SET_DUMPABLE, 1)
    module = _import_student(cfg["module"], cfg["resp_fd"])
    _send(cfg["resp_fd"], {"event": "ready"})
    _serve(cfg, module, r, step)


CHILD_BOOT = (
    "import sys, json; sys.path[:0] = sys.argv[1].split(':'); "
    "from redis_course.labs.sandbox.inbox import run; run(json.loads(sys.argv[2]))"
)


def _exec_with_clock(cfg: dict) -> None:
    """A machine whose wall clock is off: a fresh interpreter under libfaketime, so that every clock
    the process reads (``time``, ``datetime``, C code through libc) is off before anything runs;
    monotonic clocks are not (they measure durations)."""
    import sys

    for fd in (cfg["req_fd"], cfg["resp_fd"], 1, 2):
        os.set_inheritable(fd, True)
    offset = float(cfg["clock_offset"])
    env = dict(
        os.environ,
        LD_PRELOAD=cfg["faketime"],
        FAKETIME=f"{offset:+.3f}s",
        FAKETIME_DONT_FAKE_MONOTONIC="1",
        FAKETIME_CACHE_DURATION="86400",
    )
    child = {**cfg, "faked": True, "out_fd": os.dup(1)}
    os.set_inheritable(child["out_fd"], True)
    os.execve(
        sys.executable, [sys.executable, "-I", "-S", "-c", CHILD_BOOT, cfg["import_path"], json.dumps(child)], env
    )


def _environment(cfg: dict) -> None:
    """A fixed environment, set before any student code: the time zone is the grader's choice."""
    import time

    kept = (
        {k: v for k, v in os.environ.items() if k == "LD_PRELOAD" or k.startswith("FAKETIME")}
        if cfg.get("faked")
        else {}
    )
    os.environ.clear()
    os.environ.update(kept)
    os.environ.update(
        {
            "PATH": "/usr/bin:/bin",
            "HOME": cfg["work"],
            "TMPDIR": cfg.get("tmp", "/tmp"),
            "LANG": "C.UTF-8",
            "TZ": cfg.get("tz") or "UTC",
            "COURSE_KEY_PREFIX": cfg["prefix"],
        }
    )
    time.tzset()


def _limits(cfg: dict) -> None:
    import resource

    lim = cfg["limits"]
    cpu = max(1, int(lim["cpu_s"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (lim["memory_mb"] << 20, lim["memory_mb"] << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["fsize_mb"] << 20, lim["fsize_mb"] << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (lim["nofile"], lim["nofile"]))
    if cfg.get("nproc"):  # counted in the box's own user namespace: the box's processes alone
        resource.setrlimit(resource.RLIMIT_NPROC, (cfg["nproc"], cfg["nproc"]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file too big: an OSError, not a silent death


def _kernel_buffers(cfg: dict) -> None:
    """From here on the process keeps the kernel's buffers small and countable (:func:`.launch.student_filter`):
    set once its Redis connection is made, before any code of the student's runs."""
    from redis_course.labs.sandbox import launch

    code = launch.student_filter(tcp=cfg.get("url", "").split(":", 1)[0] in ("redis", "rediss"))
    if code is not None:
        launch.install_filter(code)


def _redirect_output(cfg: dict) -> None:
    """stdin from /dev/null, stdout and stderr into the grader's file for this process."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(cfg["out_fd"], 1)
    os.dup2(cfg["out_fd"], 2)
    os.close(cfg["out_fd"])
    os.close(null)


def _connect(cfg: dict):
    """The box's Redis, through the fault proxy; an import error when it never answers."""
    import time

    from redis_course.core.backend import connect

    deadline = time.monotonic() + 10
    while True:
        try:
            return connect(cfg["url"], prefix=cfg["prefix"], socket_connect_timeout=3)
        except Exception as exc:  # noqa: BLE001
            if time.monotonic() > deadline:
                _send(cfg["resp_fd"], {"event": "import_error", "type": "RedisUnavailable", "message": _short(exc)})
                os._exit(0)
            time.sleep(0.005)


def _grader_steps(cfg: dict) -> dict:
    """Steps reported by :func:`redis_course.lessons.faults.crash_point` go to the grader, which
    alone decides whether the process dies there (it kills it from outside).  Installed before the
    student's module: a module that replaces the reporter only stops its own steps being seen."""
    from redis_course.lessons import faults

    current: dict = {"id": None}

    def report(step: str) -> None:
        _send(cfg["resp_fd"], {"id": current["id"], "step": step})
        buf = b""
        while b"\n" not in buf:
            chunk = os.read(cfg["req_fd"], 4096)
            if not chunk:
                os._exit(0)
            buf += chunk
        current["pending"] = buf.split(b"\n", 1)[1]

    faults.on_step(report)
    return current


def _import_student(module_file: str, resp_fd: int):
    """The student's module as ``lab``; whatever its import raises is reported once, then the end."""
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("lab", module_file)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["lab"] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
        detail = _short(exc)
        if isinstance(exc, SyntaxError):
            detail = f"line {exc.lineno}: {exc.msg}"
        _send(
            resp_fd,
            {
                "event": "import_error",
                "type": type(exc).__name__,
                "message": detail,
                "traceback": _tb_tail(exc, module_file),
            },
        )
        os._exit(0)


def _serve(cfg: dict, module, r, step: dict | None) -> None:
    """One JSON request per line: a call of one of the module's functions, on ``r`` (or, with
    ``"server": 2``, on a client of the box's second address: to the student, another server)."""
    req_fd, resp_fd, buf = cfg["req_fd"], cfg["resp_fd"], b""
    second = None  # the client of the box's second address, on a call that asks for it
    while True:
        if step is not None and step.get("pending"):
            buf, step["pending"] = step["pending"] + buf, b""
        if b"\n" not in buf:
            chunk = os.read(req_fd, 1 << 16)
            if not chunk:
                os._exit(0)
            buf += chunk
            continue
        line, buf = buf.split(b"\n", 1)
        req = json.loads(line)
        if step is not None:
            step["id"] = req.get("id")
        if r is None:  # a task of the grader's: the function takes no client
            _send(resp_fd, _handle(req, module, None, cfg.get("module", ""), task=True))
        elif req.get("server") == 2 and cfg.get("second_url"):  # "another server": made once, kept
            if second is None:
                second = _connect({**cfg, "url": cfg["second_url"]})
            _send(resp_fd, _handle(req, module, second, cfg["module"]))
        else:
            _send(resp_fd, _handle(req, module, r, cfg["module"]))


def _handle(req: dict, module: object, r: object, module_file: str, task: bool = False) -> dict:
    rid, name = req["id"], req["fn"]
    fn = getattr(module, name, None)
    if task and name not in getattr(module, "TASKS", ()):
        fn = None
    if not callable(fn):
        return {"id": rid, "error": {"type": "AttributeError", "message": f"the module has no function {name}()"}}
    try:
        args = req.get("args", [])
        result = fn(*args, **req.get("kwargs", {})) if task else fn(r, *args, **req.get("kwargs", {}))
    except Exception as exc:  # noqa: BLE001
        return {
            "id": rid,
            "error": {"type": type(exc).__name__, "message": _short(exc), "traceback": _tb_tail(exc, module_file)},
        }
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: not an answer
        return {"id": rid, "crash": f"{type(exc).__name__} raised inside {name}()"}
    try:
        return {"id": rid, "ok": json.loads(json.dumps(result, allow_nan=False))}
    except BaseException:  # noqa: BLE001
        return {
            "id": rid,
            "error": {
                "type": "TypeError",
                "message": (
                    f"{name}() returned a {type(result).__name__}, which is not a JSON value "
                    "(int, float, str, bool, None, list or dict)"
                ),
            },
        }
