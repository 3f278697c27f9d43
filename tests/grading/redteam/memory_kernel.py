"""``python memory_kernel.py TAG ATTACK BACKEND [MODE]``: one box as this user grades it (no cgroup it may write:
rlimits, the seccomp filter and the memory watchdog), with a memory limit of 256 MiB (512 for
``burst``), and one attack on the memory bound.  Prints what the grader saw, as JSON, for
``test_limits.py``.

* ``buffers``: four children each queue as much unread data as they can in the kernel: Unix socket
  pairs (buffers raised with SO_SNDBUF/SO_RCVBUF), datagrams, pipes grown with F_SETPIPE_SZ, and
  sockets full of data passed in flight over SCM_RIGHTS then closed (in flight, no descriptor of
  the process counts them).  Each child writes how many bytes it queued into the work folder; the
  call returns their sum.  Then an honest call: a socket pair and a pipe, used as a program would.
* ``fleet``: the same with 24 children, whose buffers (about 6 MiB each under the seccomp filter)
  and resident sets together pass the limit although their resident sets alone do not.
* ``burst``: six children each touch 200 MiB (under the per-process limit) at once, as fast as the
  machine lets them; the watchdog's reason says how much the box held when it was caught.
"""

import json
import shutil
import sys
import textwrap
import threading
import time

from redis_course.labs.sandbox import cgroups, make_run_dir
from redis_course.labs.sandbox.box import Box
from redis_course.labs.sandbox.errors import StudentCrash
from redis_course.labs.sandbox.limits import Limits
from redis_course.labs.sandbox.process import StudentProcess

SOURCE = textwrap.dedent('''
    import fcntl, os, socket, time

    def _fill(send):
        total = 0
        while True:
            try:
                n = send(b"k" * 65536)
            except OSError:
                return total
            if not n:
                return total
            total += n

    def _grow(s):
        for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF, 32, 33):  # and the FORCE variants
            try:
                s.setsockopt(socket.SOL_SOCKET, opt, 64 << 20)
            except OSError:
                pass

    def _queue_everything():
        kept, queued = [], 0
        carrier = None
        try:
            carrier = socket.socketpair()
            kept.append(carrier)
        except OSError:
            pass
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET):
            for _ in range(40):
                try:
                    a, b = socket.socketpair(socket.AF_UNIX, kind)
                except OSError:
                    break
                for s in (a, b):
                    _grow(s)
                    s.setblocking(False)
                queued += _fill(a.send) + _fill(b.send)
                sent = False
                if carrier is not None:  # in flight: no descriptor of this process holds them any more
                    try:
                        socket.send_fds(carrier[0], [b"."], [a.fileno(), b.fileno()])
                        sent = True
                    except OSError:
                        pass
                if sent:
                    a.close()
                    b.close()
                else:
                    kept.append((a, b))
        for _ in range(40):
            try:
                r, w = os.pipe()
            except OSError:
                break
            try:
                fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
            except OSError:
                pass
            os.set_blocking(w, False)
            queued += _fill(lambda data: os.write(w, data))
            kept.append((r, w))
        return kept, queued

    def buffers(r, children, hold):
        """Children that each queue unread data in kernel buffers and hold it."""
        pids = []
        for k in range(children):
            pid = os.fork()
            if pid == 0:
                kept, queued = _queue_everything()
                with open(f"queued-{k}", "w") as f:
                    f.write(str(queued))
                time.sleep(hold)
                os._exit(0)
            pids.append(pid)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(os.path.exists(f"queued-{k}") for k in range(children)):
            time.sleep(0.05)
        time.sleep(0.3)
        total = sum(int(open(f"queued-{k}").read() or 0) for k in range(children) if os.path.exists(f"queued-{k}"))
        for pid in pids:
            os.waitpid(pid, 0)
        return total >> 20

    def honest_ipc(r):
        """A socket pair and a pipe as a program uses them: written, then read."""
        a, b = socket.socketpair()
        a.sendall(b"ping" * 1000)
        got = len(b.recv(8192))
        rd, wr = os.pipe()
        os.write(wr, b"x" * 1000)
        got += len(os.read(rd, 4096))
        return got

    def burst(r, children, mib):
        """Children that each touch ``mib`` MiB at once, as fast as they can."""
        pids = []
        for _ in range(children):
            pid = os.fork()
            if pid == 0:
                held = b"\\x01" * (mib << 20)
                time.sleep(20)
                os._exit(len(held) & 1)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        return "held"
    ''')


def meminfo() -> dict:
    with open("/proc/meminfo") as f:
        return {k: int(v.split()[0]) >> 10 for k, v in (line.split(":", 1) for line in f)}


attack = sys.argv[2]
run = make_run_dir("course-memkernel-")
seen = {"cgroup": cgroups.cgroup_version(), "attack": attack}
box = Box(
    SOURCE.encode(),
    run,
    f"course:memkernel:{sys.argv[1]}:",
    Limits(call_timeout_s=25, memory_mb=512 if attack == "burst" else 256),
    backend=sys.argv[3],
    mode=sys.argv[4] if len(sys.argv) > 4 else None,
)  # None: as grade would (bubblewrap here)
try:
    box.start()
    watch = getattr(box, "watch", None)
    seen["mode"], seen["watch"] = box.mode, watch is not None
    proc = StudentProcess(box)
    before = meminfo()
    lowest = [before["MemAvailable"]]
    done = threading.Event()

    def sample() -> None:  # the machine's available memory while the attack runs (others' noise included)
        while not done.wait(0.05):
            lowest[0] = min(lowest[0], meminfo()["MemAvailable"])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        if attack in ("buffers", "fleet"):
            seen["result"] = {"returned": proc.call("buffers", [4 if attack == "buffers" else 24, 3])}
        else:
            seen["result"] = {"returned": proc.call("burst", [6, 200])}
    except StudentCrash as exc:
        seen["result"] = {"crash": exc.detail}
    except Exception as exc:  # noqa: BLE001 - a timeout
        seen["result"] = {"other": f"{type(exc).__name__}: {exc}"}
    seen["seconds"] = round(time.monotonic() - started, 2)
    done.set()
    sampler.join()
    seen["peak_mib"] = (watch.peak >> 20) if watch else None
    seen["mem_available_drop_mib"] = before["MemAvailable"] - lowest[0]
    box.reap()
    if attack == "buffers":
        seen["honest"] = StudentProcess(box).call("honest_ipc", [])
finally:
    box.stop()
    shutil.rmtree(run, ignore_errors=True)
print(json.dumps(seen))
