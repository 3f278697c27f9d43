"""``python memory_fanout.py TAG [MODE]``: one box as this user grades it (no cgroup it may write: rlimits and the
memory watchdog), with a memory limit of 256 MiB; a call whose four children touch 100 MiB each,
then honest calls (100 MiB in one process, two children of 60 MiB).  Prints what the grader saw, as JSON, for ``test_limits.py``."""

import json
import shutil
import sys
import textwrap

from redis_course.labs.sandbox.errors import StudentCrash
from redis_course.labs.sandbox import cgroups, make_run_dir
from redis_course.labs.sandbox.box import Box
from redis_course.labs.sandbox.limits import Limits
from redis_course.labs.sandbox.process import StudentProcess

SOURCE = textwrap.dedent('''
    import os, time
    def fan_out(r, children, mib, hold):
        """Children that each touch ``mib`` MiB (under the per-process limit) and hold it."""
        pids = []
        for _ in range(children):
            pid = os.fork()
            if pid == 0:
                held = b"\\x01" * (mib << 20)
                time.sleep(hold)
                os._exit(len(held) & 1)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        return "held"
    def honest(r, mib):
        return len(b"\\x02" * (mib << 20)) >> 20
    ''')

run = make_run_dir("course-memwatch-")
seen = {"cgroup": cgroups.cgroup_version()}
box = Box(
    SOURCE.encode(),
    run,
    f"course:memwatch:{sys.argv[1] if len(sys.argv) > 1 else 'x'}:",
    Limits(call_timeout_s=25, memory_mb=256),
    backend="fakeredis",
    mode=sys.argv[2] if len(sys.argv) > 2 else None,
)  # None: as grade would (bubblewrap here)
try:
    box.start()
    watch = getattr(box, "watch", None)
    seen["mode"], seen["watch"] = box.mode, watch is not None
    proc = StudentProcess(box)
    try:
        seen["fan_out"] = {"returned": proc.call("fan_out", [4, 100, 30])}
    except StudentCrash as exc:
        seen["fan_out"] = {"crash": exc.detail}
    except Exception as exc:  # noqa: BLE001 - a timeout: the children held their memory meanwhile
        seen["fan_out"] = {"other": f"{type(exc).__name__}: {exc}"}
    seen["peak_mib"] = (watch.peak >> 20) if watch else None
    box.reap()
    honest = StudentProcess(box)
    seen["honest"] = honest.call("honest", [100])
    seen["honest_fan_out"] = honest.call("fan_out", [2, 60, 1])  # two children, 120 MiB together
finally:
    box.stop()
    shutil.rmtree(run, ignore_errors=True)
print(json.dumps(seen))
