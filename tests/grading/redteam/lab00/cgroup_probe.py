"""Probe (not an attack): which cgroup the student's process is in and the memory and process
limits there, printed for the test (``cgroup <memory bytes> <pids>``)."""


def _probe():
    mem = pids = "none"
    try:
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return "cgroup unknown"
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        for ctrl, file, base in (
            ("memory", "memory.limit_in_bytes", "/sys/fs/cgroup/memory"),
            ("pids", "pids.max", "/sys/fs/cgroup/pids"),
            ("", "memory.max", "/sys/fs/cgroup"),
            ("", "pids.max", "/sys/fs/cgroup"),
        ):
            if ctrl in ctrls.split(",") or (ctrl == "" and ctrls == ""):
                try:
                    value = open(f"{base}{path}/{file}").read().strip()
                except OSError:
                    continue
                if file.startswith("memory"):
                    mem = value
                else:
                    pids = value
    return f"cgroup {mem} {pids}"


print(_probe(), flush=True)


def count_view(r, post_id):
    return -1


def reset(r, post_id):
    return -1
