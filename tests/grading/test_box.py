"""The box's properties, each tried the way a submission would try to break it, on both backends.

Every test starts a box (the student's processes, their Redis, the fault proxy) for a small module
that plays the attacker and reports what it reached; the test checks the report and what the grader
sees.  These are properties, not samples: what the box must hold whatever route is tried.
"""

from __future__ import annotations

import os
import secrets
import shutil
import textwrap

import pytest

from redis_course.labs.sandbox.errors import InjectedCrash, StudentCrash, StudentError
from redis_course.labs.sandbox import launch, make_run_dir
from redis_course.labs.sandbox.box import Box
from redis_course.labs.sandbox.limits import Limits
from redis_course.labs.sandbox.process import StudentProcess
from redis_course.core.backend import CourseError
from redis_course.core.servers import redis_server_binary

pytestmark = pytest.mark.slow

BACKENDS = ["fakeredis", "redis-server"]
ISOLATED = launch.mode() == "bwrap"
needs_bwrap = pytest.mark.skipif(not ISOLATED, reason="bubblewrap cannot make namespaces here")


@pytest.fixture
def boxes():
    """``start(source, backend)`` starts a box; every box is stopped after the test."""
    run, started = make_run_dir("course-boxtest-"), []

    def start(source: str, backend: str = "fakeredis", **limits) -> Box:
        if backend == "redis-server" and not redis_server_binary():
            pytest.skip("redis-server is not installed")
        box = Box(
            textwrap.dedent(source).encode(),
            run,
            f"course:box:{secrets.token_hex(3)}:",
            Limits(call_timeout_s=10, **limits),
            backend=backend,
        )
        started.append(box.start())
        return box

    yield start
    for box in started:
        box.stop()
    shutil.rmtree(run, ignore_errors=True)


LUA_ROUTES = {
    "python": "return type(python)",
    "debug": "return type(debug)",
    "print": "return type(print)",
    "io": "return type(io)",
    "os.execute": "return type(os.execute)",
    "require": "return type(require)",
    "package": "return type(package)",
    "loadfile": "return type(loadfile)",
    "dofile": "return type(dofile)",
    "registry": "return type(debug.getregistry)",
    "call.__globals__": "return tostring(redis.call.__globals__)",
    "call.__self__": "return tostring(redis.call.__self__)",
    "cjson.encode.__globals__": "return tostring(cjson.encode.__globals__)",
    "metatable index": "local mt = getmetatable(redis.call); return tostring(mt and mt.__index(redis.call, '__globals__'))",
    "python.builtins via registry": "return tostring(debug.getregistry()._LOADED.python.builtins)",
}


RUN_SCRIPT = """
def lua(r, src):
    try:
        return str(r.eval(src, 0))
    except Exception as exc:
        return 'refused: ' + type(exc).__name__
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_scripts_reach_nothing_of_python_or_the_machine(boxes, backend):
    """A script gets Redis 7's Lua and nothing else: no route from Lua to Python or to the machine."""
    box = boxes(RUN_SCRIPT, backend)
    proc = StudentProcess(box)
    for name, src in LUA_ROUTES.items():
        seen = proc.call("lua", [src])
        assert seen.startswith("refused") or seen in ("nil", "None"), f"{backend}: {name} -> {seen}"


POISON = {
    "redis.call": "redis.call = function() return 42 end",
    "redis via rawset": "rawset(redis, 'call', function() return 42 end)",
    "_G.redis": "_G.redis = {call = function() return 42 end}",
    "_G via rawset": "rawset(_G, 'redis', {call = function() return 42 end})",
    "string library": "string.format = function() return '42' end",
    "string metatable": "getmetatable('').__index = {format = function() return '42' end}",
    "tonumber": "tonumber = function() return 42 end",
    "thread globals": "setfenv(0, {redis = {call = function() return 42 end}})",
    "cjson": "cjson.encode = function() return '42' end",
    "metatable of _G": "setmetatable(_G, {__index = function() return function() return 42 end end})",
}
CHECK = "return {redis.call('INCRBY', KEYS[1], 1), string.format('%d', 7), tonumber('8'), cjson.encode({1})}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_script_changes_what_a_later_script_finds(boxes, backend):
    """Scripts share their server's Lua: a student's script that rewrites ``redis.call``, a library or
    the globals would change what every later script sees, the grader's own included.  Redis 7
    refuses each write; the box's fakeredis does too."""
    box = boxes(RUN_SCRIPT, backend)
    proc = StudentProcess(box)
    for name, src in POISON.items():
        seen = proc.call("lua", [src + " return 'changed'"])
        assert seen.startswith("refused"), f"{backend}: {name} -> {seen}"
    client = box.redis.client(box.prefix)
    try:
        key = f"{box.prefix}check"
        assert client.eval(CHECK, 1, key) == [1, "7", 8, "[1]"], backend
    finally:
        client.close()


LIBRARY = """#!lua name=boxtest
redis.register_function('bump', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)
redis.register_function('peek', function(keys, args) return type(rawget(_G, 'debug')) end)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_functions_load_and_run_as_on_redis_7(boxes, backend):
    """FUNCTION LOAD and FCALL work in the box's server, with the same bare Lua as EVAL."""
    box = boxes(
        f"""
        LIB = {LIBRARY!r}
        def use(r):
            r.function_load(LIB, replace=True)
            return [r.fcall("bump", 1, r.key("n"), 5), r.fcall("bump", 1, r.key("n"), 2), r.fcall("peek", 0)]
        """,
        backend,
    )
    assert StudentProcess(box).call("use") == [5, 7, "nil"], backend


def test_the_box_has_no_copy_of_the_graders_environment(boxes, monkeypatch):
    """An instructor's secret in the grader's environment is nowhere in the student's process: not in
    its environment, not on its stack (where a process's first environment block stays)."""
    secret = "GRADER-SECRET-" + secrets.token_hex(8)
    monkeypatch.setenv("INSTRUCTOR_TOKEN", secret)
    box = boxes("""
        import ctypes, os
        def find(r, hexed):
            needle = bytes(b ^ 0x55 for b in bytes.fromhex(hexed))  # never in the request as it is
            hits = []
            for pid in ("self", "1"):
                try:
                    if needle in open(f"/proc/{pid}/environ", "rb").read():
                        hits.append(f"/proc/{pid}/environ")
                except OSError:
                    pass
            for line in open("/proc/self/maps"):
                if line.rstrip().endswith("[stack]"):
                    start, end = (int(x, 16) for x in line.split()[0].split("-"))
                    if needle in ctypes.string_at(start, end - start):  # its own memory, as ctypes reads it
                        hits.append("stack")
            return hits
        """)
    proc = StudentProcess(box)
    hexed = bytes(b ^ 0x55 for b in secret.encode()).hex()
    assert proc.call("find", [hexed]) == [], "the grader's environment reached the box"


@needs_bwrap
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_box_sees_no_other_process_no_network_and_no_server(boxes, backend):
    """Inside the box: its own processes only, no network beyond loopback, not the server's socket,
    not the checkout's labs (solutions, hidden tests), not the grader's run folder."""
    from redis_course import paths

    box = boxes(
        """
        import os, socket
        def look(r, hidden):
            seen = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
            for port in (6379, 5432):
                try:  # a student's process may not even make a TCP socket
                    s = socket.socket()
                except OSError:
                    continue
                s.settimeout(1)
                try:
                    s.connect(("127.0.0.1", port))
                    seen[f"tcp {port}"] = "connected"
                except OSError:
                    pass
                finally:
                    s.close()
            seen["visible"] = [p for p in hidden if os.path.exists(p)]
            seen["cmdlines"] = [open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
                                for p in os.listdir("/proc") if p.isdigit()]
            seen["writable"] = []
            for d in ["/", *hidden[-2:], os.path.dirname(hidden[-1])]:
                try:
                    open(os.path.join(d, "box-was-here"), "w").close()
                    seen["writable"].append(d)
                except OSError:
                    pass
            return seen
        """,
        backend,
    )
    hidden = [str(box.redis.socket_path), str(box.dir), str(paths.ROOT / "labs"), str(paths.ROOT / ".git")]
    seen = StudentProcess(box).call("look", [hidden])
    assert len(seen["pids"]) <= 3, seen  # bubblewrap's init, the fork server, this process
    assert not any(k.startswith("tcp") for k in seen), seen
    assert seen["visible"] == [], seen
    assert not [c for c in seen["cmdlines"] if str(box.run_dir) in c or "course-grade" in c], seen["cmdlines"]
    assert seen["writable"] == [], seen  # the root and the folders made for mounts are read-only


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_crash_is_made_outside_and_cannot_be_caught(boxes, backend):
    """The proxy cuts the armed round trip; a process that catches the error and goes on is dead
    anyway, and nothing it sent after the cut reached Redis."""
    box = boxes(
        """
        def work(r):
            for i in range(5):
                try:
                    r.incr(r.key("n"))
                except Exception:
                    r.set(r.key("after"), "caught")   # a second chance: must never arrive
            return "finished"
        """,
        backend,
    )
    grader = box.redis.client(box.prefix)
    proc = StudentProcess(box)
    proc.arm_crash(2)
    with pytest.raises(InjectedCrash):
        proc.call("work")
    assert grader.get(grader.key("n")) == "2"
    assert grader.exists(grader.key("after")) == 0
    proc.arm_crash(None)
    assert proc.call("work") == "finished"  # a fresh process, nothing armed
    assert grader.get(grader.key("n")) == "7"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_crash_cannot_be_forged_nor_a_step_disarmed(boxes, backend):
    """Only the grader's own fault raises InjectedCrash: a module that writes the grader's fault
    message or ends itself gets a crash of its own, and one that silences crash_point is not
    crashed (the test that expects the crash then fails)."""
    box = boxes(
        """
        import json, os
        from redis_course.lessons import faults
        def forge(r):
            for fd in range(3, 20):
                try:
                    os.write(fd, (json.dumps({"id": 0, "fault": {"message": "simulated crash"}}) + "\\n").encode())
                except OSError:
                    pass
            os._exit(86)
        def silenced(r):
            faults.on_step(None)
            faults.crash_point("claimed")
            return "went on"
        """,
        backend,
    )
    proc = StudentProcess(box)
    with pytest.raises(StudentCrash) as err:
        proc.call("forge")
    assert not isinstance(err.value, InjectedCrash)
    proc.crash_at("claimed")
    assert proc.call("silenced") == "went on"


def test_files_the_student_can_write_are_read_inside_the_box(boxes):
    """A ledger replaced by a link is refused by the task that reads it; the grader opens nothing."""
    box = boxes("""
        import os
        def swap(r, path):
            os.unlink(path)
            os.symlink("/box/lab.py", path)
            return os.path.islink(path)
        """)
    task = StudentProcess(box, task=True)
    db = task.call("ledger_create")
    assert task.call("ledger_total", [db, "acme"]) == 0
    assert StudentProcess(box).call("swap", [db]) is True
    with pytest.raises(StudentError) as err:
        task.call("ledger_total", [db, "acme"])
    assert err.value.type in ("ValueError", "OSError"), err.value


def test_nothing_of_one_test_is_left_for_the_next(boxes):
    """After a reap: no process the student left (daemons included), no file in the work folder
    (nor, under bubblewrap, in the box's /tmp or /dev/shm)."""
    box = boxes("""
        import os, subprocess, time
        def leave(r):
            open("note.txt", "w").write("from the last test")
            for d in ("/tmp", "/dev/shm") if os.getcwd().startswith("/box") else ():  # the box's own
                open(os.path.join(d, "note.txt"), "w").write("from the last test")
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(600)
                os._exit(0)
            return sorted(os.listdir("."))
        def look(r):
            mine = os.getpid()
            def kept(d):  # what was left, by name; not a mount point (a checkout under /tmp is hidden there)
                return sorted(e for e in os.listdir(d) if not os.path.ismount(os.path.join(d, e)))
            left = [f"{d}: {kept(d)}" for d in ("/tmp", "/dev/shm") if os.getcwd().startswith("/box") and kept(d)]
            return {"files": sorted(os.listdir(".")), "scratch": left,
                    "sleepers": [p for p in os.listdir("/proc") if p.isdigit() and int(p) != mine and
                                 b"sleep" in open(f"/proc/{p}/cmdline", "rb").read()]}
        """)
    assert "note.txt" in StudentProcess(box).call("leave")
    box.reap()
    seen = StudentProcess(box).call("look")
    assert seen == {"files": [], "scratch": [], "sleepers": []}, seen


MOUNTS = '''
    import os
    def mounts(r):
        """Every mount of the box as /proc/self/mountinfo lists it, and whether a file can be made
        at its mount point (a folder) or the folder is read-only."""
        out = []
        for line in open("/proc/self/mountinfo"):
            left, right = line.split(" - ", 1)
            fields, after = left.split(), right.split()
            point = fields[4].replace("\\\\040", " ")
            made = False
            if os.path.isdir(point) and not os.path.islink(point):
                probe = os.path.join(point, ".course-probe-%d" % os.getpid())
                try:
                    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    os.close(fd)
                    os.unlink(probe)
                    made = True
                except OSError:
                    pass
            out.append({"point": point, "options": fields[5].split(","), "type": after[0],
                        "super": after[2].split(",") if len(after) > 2 else [], "made": made})
        return out
    def devices(r):
        import multiprocessing
        with open("/dev/null", "w") as f:
            f.write("gone")
        lock = multiprocessing.Lock()  # a POSIX semaphore in /dev/shm
        with lock:
            pass
        with open("/dev/shm/x", "wb") as f:
            f.write(b"1")
        return {"random": len(open("/dev/urandom", "rb").read(8)), "zero": open("/dev/zero", "rb").read(2) == bytes(2),
                "shm": os.listdir("/dev/shm"), "src": os.listdir("/usr/src") if os.path.isdir("/usr/src") else []}
    '''


def _size_kib(superopts: list[str]) -> int | None:
    for opt in superopts:
        if opt.startswith("size="):
            return int(opt[5:].rstrip("k"))
    return None


@needs_bwrap
def test_every_place_a_box_can_write_is_bounded(boxes):
    """Whatever mounts the box is made of, each one it can write in is a tmpfs no larger than the
    box's writable space (``tmp_mb``); every other mount is read-only (or holds no files: /proc,
    devices).  Checked on every mount of the box, so a mount added later is checked too."""
    box = boxes(MOUNTS, tmp_mb=16)
    seen = StudentProcess(box).call("mounts")
    bad = []
    for m in seen:
        writable = "rw" in m["options"]
        if m["type"] == "tmpfs" and writable:
            size = _size_kib(m["super"])
            if size is None or size > 16 << 10:
                bad.append(f"{m['point']}: writable tmpfs of size {size} KiB")
        elif m["made"]:
            bad.append(f"{m['point']}: a file could be made on {m['type']}, which the limits do not bound")
    assert {m["point"] for m in seen} >= {"/", "/tmp", "/box", "/dev", "/proc"}, seen
    assert not bad, bad
    # and what a process needs of /dev still works: devices, POSIX shared memory
    dev = StudentProcess(box).call("devices")
    assert dev["random"] == 8 and dev["zero"] and "x" in dev["shm"] and dev["src"] == [], dev


HIDDEN_MEMORY = '''
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    def hold(r):
        """Each route to memory that no process's resident set shows once it is unmapped."""
        got = {}
        got["shmget"] = libc.shmget(0, 1 << 20, 0o1600) >= 0 or os.strerror(ctypes.get_errno())
        got["msgget"] = libc.msgget(0, 0o1600) >= 0 or os.strerror(ctypes.get_errno())
        got["mq_open"] = libc.syscall(240, b"q", 0o100 | 2, 0o600, None) >= 0 or os.strerror(ctypes.get_errno())
        try:
            os.close(os.memfd_create("hold"))
            got["memfd_create"] = True
        except OSError as exc:
            got["memfd_create"] = exc.strerror
        return got
    '''


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_memory_outside_the_processes(boxes, backend):
    """SysV shared memory and message queues, memfd and POSIX message queues hold memory that no
    process's resident set counts once unmapped (the memory watchdog would not see it) and SysV's
    outlives the box where the IPC namespace is the machine's: a box may make none of them."""
    import platform

    if launch.seccomp_filter() is None:
        pytest.skip(f"no list of calls to refuse on {platform.machine()}")
    box = boxes(HIDDEN_MEMORY, backend)
    got = StudentProcess(box).call("hold")
    assert all(v == "Operation not permitted" for v in got.values()), got


KERNEL_BUFFERS = '''
    import fcntl, os, socket

    def grow(r):
        """Every way to make a kernel buffer larger than its default, or to hold one behind no
        descriptor of the process; then what a program needs of sockets and pipes."""
        got = {}

        def attempt(name, fn):
            try:
                fn()
                got[name] = True
            except OSError as exc:
                got[name] = exc.strerror

        a, b = socket.socketpair()
        rd, wr = os.pipe()
        attempt("SO_SNDBUF", lambda: a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22))
        attempt("SO_RCVBUF", lambda: a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22))
        attempt("SCM_RIGHTS", lambda: socket.send_fds(a, [b"."], [rd]))
        attempt("F_SETPIPE_SZ", lambda: fcntl.fcntl(wr, 1031, 1 << 20))
        attempt("datagram", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
        attempt("seqpacket", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
        attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        attempt("udp", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
        attempt("listen", lambda: socket.socket(socket.AF_UNIX).listen())
        refused = all(v == "Operation not permitted" for v in got.values())
        a.sendall(b"ping")
        os.write(wr, b"pong")
        r.set("k", "v")
        return {"refused": refused or got, "works": [b.recv(4).decode(), os.read(rd, 4).decode(), r.get("k")]}
    '''


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_kernel_buffer_past_its_default(boxes, backend):
    """Memory a socket or a pipe holds for unread data is the kernel's, in no resident set: a
    student's process may not grow a buffer (SO_SNDBUF, SO_RCVBUF, F_SETPIPE_SZ), pass descriptors
    in flight (SCM_RIGHTS), queue datagrams or connections, or open a socket but a Unix stream one,
    so that each descriptor it holds is worth a known bound (``box.FD_BUFFER_BYTES``).  A socket
    pair, a pipe and its Redis still work."""
    import platform

    if launch.student_filter() is None:
        pytest.skip(f"no list of calls to refuse on {platform.machine()}")
    got = StudentProcess(boxes(KERNEL_BUFFERS, backend)).call("grow")
    assert got == {"refused": True, "works": ["ping", "pong", "v"]}, got


HOG = '''
    import threading
    held = []
    def hold(r):
        """Start threads until the box says no; keep them all (they count while this process lives)."""
        stop = threading.Event()
        while len(held) < 4096:
            t = threading.Thread(target=stop.wait, daemon=True)
            try:
                t.start()
            except RuntimeError:
                break
            held.append(t)
        return len(held)
    '''


@pytest.mark.skipif(os.geteuid() != 0, reason="boxes get uids of their own only when the grader is root")
def test_boxes_graded_at_once_do_not_share_their_limits(boxes):
    """Two students graded at the same time by one grader (``grade --jobs``): what one box takes of
    processes and threads is not taken from the other (each has a uid and a cgroup of its own)."""
    first, second = boxes(HOG), boxes(HOG)
    took = StudentProcess(first).call("hold")
    got = StudentProcess(second).call("hold")
    assert took >= 8, f"the first box started only {took} threads"
    assert got >= took // 2, f"the second box got {got} threads while the first held {took}"
    assert {first.uid, first.server_uid}.isdisjoint({second.uid, second.server_uid})


SPIN = '''
    import threading, time

    def spin(r, seconds):
        """Three threads and the caller spinning for ``seconds`` of wall time, then a command; the CPU
        seconds this process got."""
        end = time.monotonic() + seconds

        def burn():
            while time.monotonic() < end:
                pass

        threads = [threading.Thread(target=burn) for _ in range(3)]
        for t in threads:
            t.start()
        burn()
        for t in threads:
            t.join()
        r.set("k", "v")
        return time.process_time()
    '''


def _throttled(box) -> int:
    """How many CPU periods the box's cgroup was held back in (its ``cpu.stat``)."""
    for d in box.cgroup.dirs:
        stat = os.path.join(d, "cpu.stat")
        if os.path.exists(stat):
            with open(stat) as f:
                return int(dict(line.split() for line in f).get("nr_throttled", 0))
    return 0


def test_a_box_uses_no_more_cores_than_it_is_given(boxes):
    """``Limits.box_cpus`` (``grade --box-cpus``) is the box's CPU quota: a process spinning on every
    thread it has gets no more than that share of the wall time, and the kernel says it held it back."""
    box = boxes(SPIN, box_cpus=0.2)
    if box.cgroup is None:
        pytest.skip("no cgroup holds a box's CPU on this machine")
    used = StudentProcess(box).call("spin", [2.0])
    assert used <= 0.2 * 2.0 * 1.5 + 0.3, f"the box got {used:.2f} CPU-s in 2 s of wall time at 0.2 cores"
    assert _throttled(box) > 0, "the kernel never held the box back: it has no CPU quota"


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_command_cannot_take_the_servers_memory(boxes, backend):
    """A single command that would allocate past the box's bounds is refused or ends only the box's
    own server, which the next test gets back healthy."""
    box = boxes(
        """
        def grow(r):
            try:
                r.setrange(r.key("big"), 600 << 20, "x")
                return "accepted"
            except Exception as exc:
                return "refused: " + type(exc).__name__
        """,
        backend,
    )
    seen = StudentProcess(box).call("grow")
    assert seen.startswith("refused"), seen
    box.reset()
    assert box.redis.healthy()


def test_in_a_container_the_container_is_the_box(monkeypatch):
    """Where no namespace can be made (a container without CAP_SYS_ADMIN), the same box runs
    without bubblewrap: calls, crashes from outside and reaps still hold, and the mode says so."""
    monkeypatch.setenv("COURSE_BWRAP", "")
    monkeypatch.setenv("COURSE_CONTAINER", "1")
    launch.bwrap_binary.cache_clear()
    try:
        assert launch.mode() == "container"
        run = make_run_dir("course-boxtest-")
        box = Box(b"def inc(r):\n    return r.incr(r.key('n'))\n", run, "course:box:c:", backend="fakeredis").start()
        try:
            assert box.mode == "container"
            proc = StudentProcess(box)
            assert proc.call("inc") == 1
            proc.arm_crash(0)
            with pytest.raises(InjectedCrash):
                proc.call("inc")
            proc.arm_crash(None)
            assert proc.call("inc") == 2
            box.reap()
        finally:
            box.stop()
            shutil.rmtree(run, ignore_errors=True)
    finally:
        launch.bwrap_binary.cache_clear()


LEAVE = """
    import os
    def leave(r, tag):
        left = []
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):
            try:
                os.makedirs(f"{folder}/{tag}-dir", exist_ok=True)
                for path in (f"{folder}/{tag}", f"{folder}/{tag}-dir/inner"):
                    with open(path, "w") as f:
                        f.write("the first student's answer")
                    os.chmod(path, 0o666)
                    left.append(path)
            except OSError:
                pass
        return left
    """


@pytest.mark.skipif(os.geteuid() != 0, reason="in a container a box has a uid of its own only when the grader is root")
def test_in_a_container_nothing_a_box_wrote_survives_it(monkeypatch):
    """A container has no mount namespace to give each box its own /tmp: what a student writes in the
    machine's shared folders (/tmp, /var/tmp, /dev/shm) goes when their box stops, so the next
    student graded in the same container finds none of it."""
    monkeypatch.setenv("COURSE_BWRAP", "")
    monkeypatch.setenv("COURSE_CONTAINER", "1")
    launch.bwrap_binary.cache_clear()
    tag = f"course-boxtest-left-{secrets.token_hex(4)}"
    try:
        run = make_run_dir("course-boxtest-")
        box = Box(textwrap.dedent(LEAVE).encode(), run, "course:box:left:", backend="fakeredis").start()
        try:
            if box.uid is None:
                pytest.skip("Python is not reachable by a box's own uid here")
            left = StudentProcess(box).call("leave", [tag])
            assert left, "the student could write in no shared folder"
        finally:
            box.stop()
            shutil.rmtree(run, ignore_errors=True)
        survived = [p for p in left if os.path.lexists(p)]
        survived += [d for d in (f"/tmp/{tag}-dir", f"/var/tmp/{tag}-dir", f"/dev/shm/{tag}-dir") if os.path.lexists(d)]
        assert survived == [], survived
    finally:
        launch.bwrap_binary.cache_clear()
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):
            shutil.rmtree(f"{folder}/{tag}-dir", ignore_errors=True)
            if os.path.lexists(f"{folder}/{tag}"):
                os.unlink(f"{folder}/{tag}")


@pytest.mark.skipif(os.geteuid() != 0, reason="files of another uid can be made only as root")
def test_the_sweep_takes_a_boxs_files_and_nothing_else(tmp_path):
    """What :func:`sweep_files_of` removes after a box without its own /tmp: every file, folder and
    link of the box's uids, and nothing of anyone else's, not even inside the box's folders."""
    from redis_course.labs.sandbox.box import sweep_files_of

    uid, other = launch.UID_BASE + 7, launch.UID_BASE + 9
    mine = [tmp_path / "answer.txt", tmp_path / "d" / "deep" / "x", tmp_path / "link"]
    theirs = [tmp_path / "grader.txt", tmp_path / "d" / "grader-too.txt"]
    (tmp_path / "d" / "deep").mkdir(parents=True)
    for path in mine[:2] + theirs:
        path.write_text("x")
    mine[2].symlink_to(theirs[0])
    for path in mine + [tmp_path / "d" / "deep"]:
        os.lchown(path, uid, uid)
    os.lchown(theirs[1], other, other)
    assert sweep_files_of((uid,), roots=(str(tmp_path),)) == 4
    assert [p for p in mine if os.path.lexists(p)] == []
    assert all(p.exists() for p in theirs)


@pytest.mark.parametrize("backend", ["fakeredis", "redis-server"])
def test_a_box_starts_whatever_folder_it_is_given(tmp_path, backend):
    """A box's sockets live below the folder it is given; given a long one (pytest's own tmp_path, a
    user's TMPDIR, a longer user name) their paths once passed the kernel's 108 bytes and no box
    started.  The box makes its folder in a short one of its own then, and leaves nothing of it."""
    if backend == "redis-server" and not redis_server_binary():
        pytest.skip("redis-server is not installed")
    long = tmp_path / ("t" * 90)
    long.mkdir()
    box = Box(b"def f(r):\n    return r.incr(r.key('n'))\n", long, "course:box:long:", backend=backend)
    try:
        box.start()
        assert len(os.fsencode(box.redis.socket_path)) <= 107
        assert StudentProcess(box).start().call("f", []) == 1
    finally:
        box.stop()
    assert not os.path.exists(box.dir) and not os.path.exists(box.run_dir), "the box left its folder"
    assert os.listdir(long) == []


def test_a_long_tmpdir_takes_a_short_folder_or_says_what_to_do(tmp_path, monkeypatch):
    """An ordinary user's run folder goes in TMPDIR when its path is short enough for a box's sockets,
    else in the first short folder the user may write (/tmp, /var/tmp, /dev/shm, /run/user/<uid>);
    with none, one sentence says what to set, not a traceback from deep in the box."""
    from redis_course.labs import sandbox

    long = tmp_path / ("t" * 60)
    long.mkdir()
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)  # the folders an ordinary user's grader takes
    base = sandbox._run_base()
    assert base != str(long) and len(base) <= sandbox.RUN_BASE_MAX and os.access(base, os.W_OK)
    short = tmp_path.parent / "s"  # pytest's base folder is short enough on no machine; make one that is
    if len(str(short)) <= sandbox.RUN_BASE_MAX:
        short.mkdir(exist_ok=True)
        monkeypatch.setenv("TMPDIR", str(short))
        assert sandbox._run_base() == str(short)
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.setattr(sandbox, "_writable", lambda path: path == str(long))
    with pytest.raises(sandbox.NoRunBase) as err:
        make_run_dir("course-boxtest-")
    message = str(err.value)
    assert "TMPDIR" in message and str(sandbox.RUN_BASE_MAX) in message and "\n" not in message
    assert isinstance(err.value, CourseError)
