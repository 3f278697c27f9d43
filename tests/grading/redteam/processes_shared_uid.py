"""``python processes_shared_uid.py TAG BACKEND``: one box as this user grades it, while the same user
runs 60 other processes elsewhere (a grading machine's other boxes, the user's own programs).  The
student forks until the kernel refuses; then an honest call forks 8 children.  Prints, as JSON, how
many forks the box was allowed, for ``test_limits.py``."""

import json
import subprocess
import sys
import textwrap

from redis_course.labs.sandbox import make_run_dir
from redis_course.labs.sandbox.box import Box
from redis_course.labs.sandbox.limits import Limits
from redis_course.labs.sandbox.process import StudentProcess

SOURCE = textwrap.dedent("""
    import os, time

    def fork_all(r, most):
        n = 0
        for _ in range(most):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            n += 1
        return n

    def honest(r, k):
        pids = []
        for _ in range(k):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            pids.append(pid)
        return sum(os.waitpid(p, 0)[1] == 0 for p in pids)
""")

others = [subprocess.Popen(["sleep", "60"]) for _ in range(60)]
run = make_run_dir("course-nproc-")
seen = {}
box = Box(SOURCE.encode(), run, f"course:nproc:{sys.argv[1]}:", Limits(call_timeout_s=20), backend=sys.argv[2])
try:
    box.start()
    seen["mode"], seen["nproc"] = box.mode, box.limits.nproc
    seen["forks"] = StudentProcess(box).call("fork_all", [500])
    box.reap()
    seen["honest"] = StudentProcess(box).call("honest", [8])
finally:
    box.close()
    for p in others:
        p.kill()
        p.wait()
print(json.dumps(seen))
