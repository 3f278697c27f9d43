"""The process that runs one student's module (started by :mod:`.sandbox`; trusted until the import).

    python -I -S -c BOOT IMPORT_PATH CONFIG_JSON

Sequence: (as root) new namespaces → fork: the outer process stays root and only waits, relaying a
kill to the inner one, which is PID 1 of its namespace (killing it kills every process it made) →
private mounts (an allow-list: the system's folders, Python, the course's source, the socket's
folder; size-limited tmpfs for the work folder and /tmp) → resource limits → own uid → output to
the grader's file (a descriptor) → import the student's module → answer requests.

Under bubblewrap (``mode`` ``bwrap``) the namespaces and mounts are made by ``bwrap`` before this
process starts.  Without isolation (``none``) an outer process still stays behind as a subreaper:
when the inner one ends or is stopped, it kills every process the student's code left, daemons
included.

Protocol (JSON lines): requests ``{"id", "fn", "args", "kwargs"}`` arrive on ``req_fd``; replies
``{"id", "ok": value}``, ``{"id", "error": {type, message, traceback}}`` or ``{"id", "crash": why}`` go
to ``resp_fd``; first line ``{"event": "ready"}`` or ``{"event": "import_error", ...}``.  The grader
trusts none of it: it parses JSON only and checks every answer against its own Redis connection.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import traceback


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


def _isolate(cfg: dict) -> tuple[int, int]:
    from redis_course.labs import isolation as iso

    flags = iso.CLONE_NEWNS | iso.CLONE_NEWPID | iso.CLONE_NEWIPC | iso.CLONE_NEWUTS
    if not cfg.get("network"):
        flags |= iso.CLONE_NEWNET
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGTERM)  # the grader died: stop
    iso.unshare(flags)
    iso.make_mounts_private()
    uid = gid = iso.UID_BASE + os.getpid()
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)  # no stop may slip in before the relay is set up
    inner = os.fork()
    if inner:  # outer: root, runs no student code; relays a stop to the whole namespace
        os.close(cfg["req_fd"])  # keeps resp_fd: to say how the inner process ended

        def stop(*_: object) -> None:
            try:
                os.kill(inner, signal.SIGKILL)  # PID 1 of the namespace: every process in it dies
                os.waitpid(inner, 0)
            finally:
                os._exit(137)

        for sig in stops:
            signal.signal(sig, stop)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        while True:
            try:
                _, status = os.waitpid(inner, 0)
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(status)
        try:
            _send(cfg["resp_fd"], {"exit": code})
        except OSError:
            pass
        os._exit(code & 0xFF)
    # inner: PID 1 of a fresh PID namespace
    for sig in stops:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
    iso.mount_proc()
    keep = [os.path.realpath(p) for p in cfg["keep"]]
    iso.allow_only(keep, [os.path.realpath(d) for d in cfg.get("private", [])], cfg.get("hide", []))
    iso.expose(keep, uid, gid, keep)
    # the work folder: a size-limited tmpfs holding a copy of the module, the student's writable space
    with open(cfg["module"], "rb") as f:
        source = f.read()
    iso.mount("tmpfs", cfg["workdir"], "tmpfs", iso.MS_NOSUID | iso.MS_NODEV,
              f"mode=700,size={int(cfg['limits'].get('tmp_mb', 64))}m,nr_inodes=4096")
    with open(cfg["module"], "wb") as f:
        f.write(source)
    os.chown(cfg["workdir"], uid, gid)
    os.chown(cfg["module"], uid, gid)
    return uid, gid


PR_SET_CHILD_SUBREAPER = 36


def _reaper(cfg: dict) -> None:
    """Without namespaces: fork; the outer process (a subreaper, running no student code) waits and,
    when the inner one ends or a stop arrives, kills every process left below it, then exits."""
    from redis_course.labs import isolation as iso

    iso.prctl(PR_SET_CHILD_SUBREAPER, 1)
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    inner = os.fork()
    if not inner:
        for sig in stops:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
        return
    os.close(cfg["req_fd"])
    os.close(cfg["out_fd"])
    for sig in stops:
        signal.signal(sig, lambda *_: _end_descendants(137))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            _end_descendants(0)
        if pid == inner:
            break
    _end_descendants(os.waitstatus_to_exitcode(status))


def _children_of(parent: int) -> list[int]:
    """The pids whose parent is ``parent`` (from /proc: a subreaper's orphans included)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
                if int(stat[stat.rindex(b")") + 2:].split()[1]) == parent:
                    out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _end_descendants(code: int) -> None:
    """Kill what is left below this subreaper (orphans of killed ones become ours in turn), then exit."""
    me = os.getpid()
    for _ in range(1000):
        pids = _children_of(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            break
    os._exit(code & 0xFF)


def main(config_json: str) -> None:
    run(json.loads(config_json))


def serve_forks(sock_fd: int) -> None:
    """The fork server: a clean interpreter (only redis and redis_course imported, no test, no
    student code) that forks one student process per request, so each costs a fork, not a start.

    Requests arrive on a SOCK_SEQPACKET socket from the grader: the config as JSON plus the two pipe
    ends (SCM_RIGHTS); the reply is the new process's pid.  The server reaps its children itself.
    """
    import socket

    import redis_course.backend  # noqa: F401 - imported once here, inherited by every fork
    from redis_course.labs import cgroups
    from redis_course.labs import isolation as iso

    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
    sock = socket.socket(fileno=sock_fd)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        cfg = json.loads(data)
        wanted = [cfg["req_fd"], cfg["resp_fd"], cfg["out_fd"]]
        cfg["req_fd"], cfg["resp_fd"], cfg["out_fd"] = fds
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setsid()
                if "exec" in cfg:  # bubblewrap: the descriptors at the numbers its command line names
                    import fcntl

                    if cfg.get("cgroup"):
                        cgroups.join_cgroup(cfg["cgroup"])

                    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 512) for fd in fds]
                    for src, dst in zip(high, wanted):
                        os.dup2(src, dst, inheritable=True)
                    os.execv(cfg["exec"][0], cfg["exec"])
                run(cfg)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"pid": pid}).encode())


def run(cfg: dict) -> None:
    """The student process: confined, its output redirected, connected to the run's Redis, the
    grader's hooks taken, the student's module imported, then one request after another."""
    sys.dont_write_bytecode = True
    _confine(cfg)
    _redirect_output(cfg)
    r = _connect(cfg)
    hooks, current = _grader_hooks(r, cfg["resp_fd"])  # before any student code: the module cannot replace them
    module = _import_student(cfg["module"], cfg["resp_fd"])
    _send(cfg["resp_fd"], {"event": "ready"})
    _serve(cfg, module, r, hooks, current)


def _confine(cfg: dict) -> None:
    """cgroup first (every process from here on is in it), then namespaces or a subreaper, then
    rlimits, then (as root) this process's own uid."""
    from redis_course.labs import cgroups
    from redis_course.labs import isolation as iso

    limits = cfg["limits"]
    if cfg.get("cgroup"):
        cgroups.join_cgroup(cfg["cgroup"])
    root = cfg.get("mode", "namespaces" if cfg.get("isolate") else "none") == "namespaces" and os.geteuid() == 0
    if root:
        uid, gid = _isolate(cfg)
        nproc = limits["nproc"]
    else:
        if cfg.get("mode") != "bwrap":  # bwrap's PID namespace ends everything with it; here a subreaper does
            _reaper(cfg)
        nproc = iso.processes_of(os.getuid()) + limits["nproc"]
    os.chdir(cfg["workdir"])
    iso.set_limits(limits["cpu_s"], limits["memory_mb"], nproc, limits["fsize_mb"], limits["nofile"])
    if root:
        iso.drop_privileges(uid, gid)
        iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file too big: an OSError, not a silent death


def _redirect_output(cfg: dict) -> None:
    """stdin from /dev/null, stdout and stderr into the run's output, an environment of its own."""
    out = cfg["out_fd"] if "out_fd" in cfg else os.open("output.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.close(null)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": cfg["workdir"], "TMPDIR": cfg["workdir"],
                       "LANG": "C.UTF-8", "COURSE_KEY_PREFIX": cfg["prefix"]})


def _connect(cfg: dict):
    """The run's Redis (it may still be starting: ten seconds); an import error when it never answers."""
    import time

    from redis_course.backend import connect

    deadline = time.monotonic() + 10
    while True:
        try:
            return connect(cfg["url"], prefix=cfg["prefix"], socket_connect_timeout=3)
        except Exception as exc:  # noqa: BLE001
            if time.monotonic() > deadline:
                _send(cfg["resp_fd"], {"event": "import_error", "type": "RedisUnavailable", "message": _short(exc)})
                os._exit(0)
            time.sleep(0.005)


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
        _send(resp_fd, {"event": "import_error", "type": type(exc).__name__, "message": detail,
                        "traceback": _tb_tail(exc, module_file)})
        os._exit(0)


def _serve(cfg: dict, module, r, hooks: dict, current: dict) -> None:
    """One JSON request per line: a grader hook or a call of the student's function."""
    req_fd, resp_fd, buf = cfg["req_fd"], cfg["resp_fd"], b""
    while True:
        chunk = os.read(req_fd, 1 << 16)
        if not chunk:
            os._exit(0)
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            req = json.loads(line)
            current["id"] = req["id"]
            if "hook" in req:
                _send(resp_fd, _hook(req, hooks))
            else:
                _send(resp_fd, _handle(req, module, r, cfg["module"]))
                hooks["crash_at"](None)  # a step armed for this call is never left for the next one


CRASH_EXIT = 86  # the exit code of a process that a fault injected by the grader ended


def _grader_hooks(r: object, resp_fd: int) -> tuple[dict, dict]:
    """The faults, clocks and time zones the grader may set in this process (``{"hook": name}``
    requests), taken from the course's own code before the student's module is imported: a module
    that defines ``arm_crash``, ``SimulatedCrash``, ``set_machine_timezone`` or ``set_machine_clock``
    changes nothing.

    A fault that fires tells the grader which call it ended, then ends the process for real, so the
    student's code can neither catch it nor finish its work after it."""
    from redis_course.labs import clock
    from redis_course.lessons import faults

    clock.install()  # before the student's module: ``from time import time`` gets the shifted clock too
    current: dict = {"id": None}

    def die(why: str) -> None:
        try:
            _send(resp_fd, {"id": current["id"], "fault": {"type": "SimulatedCrash", "message": why}})
        finally:
            os._exit(CRASH_EXIT)

    faults.on_crash(die)
    hooks = {"arm_crash": lambda n: faults.arm_crash(r, n),
             "crash_at": faults.arm_step,
             "set_machine_timezone": lambda name: faults.set_machine_timezone(r, name),
             "set_machine_clock": clock.set_machine_clock}
    return hooks, current


def _hook(req: dict, hooks: dict) -> dict:
    rid, name = req["id"], req["hook"]
    if name not in hooks:
        return {"id": rid, "error": {"type": "AttributeError", "message": f"the grader has no hook {name}()"}}
    try:
        return {"id": rid, "ok": hooks[name](*req.get("args", []))}
    except Exception as exc:  # noqa: BLE001
        return {"id": rid, "error": {"type": type(exc).__name__, "message": _short(exc)}}


def _handle(req: dict, module: object, r: object, module_file: str) -> dict:
    rid, name = req["id"], req["fn"]
    fn = getattr(module, name, None)
    if not callable(fn):
        return {"id": rid, "error": {"type": "AttributeError", "message": f"the module has no function {name}()"}}
    try:
        result = fn(r, *req.get("args", []), **req.get("kwargs", {}))
    except Exception as exc:  # noqa: BLE001
        return {"id": rid, "error": {"type": type(exc).__name__, "message": _short(exc),
                                     "traceback": _tb_tail(exc, module_file)}}
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: not an answer
        return {"id": rid, "crash": f"{type(exc).__name__} raised inside {name}()"}
    try:
        return {"id": rid, "ok": json.loads(json.dumps(result, allow_nan=False))}
    except BaseException:  # noqa: BLE001
        return {"id": rid, "error": {"type": "TypeError", "message": (
            f"{name}() returned a {type(result).__name__}, which is not a JSON value "
            "(int, float, str, bool, None, list or dict)")}}
