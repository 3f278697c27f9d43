"""cgroups: memory, processes and CPU of one student process tree (stdlib only).

A grading run that may write cgroups (root, or a delegated cgroup v2) puts each student process
tree in a :class:`CGroup` of its own; elsewhere rlimits bound each process and the grader's memory
watchdog (:class:`.box.MemoryWatch`) the box's memory as a whole, and the grading log's first line
says so (:func:`cgroup_version` is None).
"""

from __future__ import annotations

import os


CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_V1 = ("memory", "pids", "cpu")


def _cgroup2_base() -> str | None:
    """Where this process may make cgroup v2 children: the root when root, else its own cgroup if
    it is delegated (writable); None when there is none."""
    if not os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        return None
    if os.geteuid() == 0:
        return CGROUP_ROOT
    try:
        with open("/proc/self/cgroup") as f:
            own = next(line.split("::", 1)[1].strip() for line in f if line.startswith("0::"))
    except (OSError, StopIteration):
        return None
    base = os.path.join(CGROUP_ROOT, own.lstrip("/"))
    return base if os.access(base, os.W_OK) else None


def cgroup_version() -> str | None:
    """``v1`` (memory, pids and cpu hierarchies writable), ``v2`` (a writable place with those
    controllers), or None: then rlimits bound each process and the memory watchdog the box."""
    if all(os.access(os.path.join(CGROUP_ROOT, c), os.W_OK) for c in CGROUP_V1):
        return "v1"
    base = _cgroup2_base()
    if base:
        try:
            with open(os.path.join(base, "cgroup.controllers")) as f:
                have = set(f.read().split())
        except OSError:
            return None
        if {"memory", "pids", "cpu"} <= have:
            return "v2"
    return None


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class CGroup:
    """One cgroup (v1: one per controller) holding a student's process tree, with its limits;
    :meth:`kill` ends every process in it, :meth:`remove` deletes it."""

    def __init__(self, name: str, memory_mb: int, nproc: int, cpus: float = 1.0) -> None:
        self.version = cgroup_version()
        self.dirs: list[str] = []
        quota = max(1000, int(100000 * cpus))  # µs per 100 ms period; the kernel refuses less than 1 ms
        if self.version == "v1":
            for c in CGROUP_V1:
                parent = os.path.join(CGROUP_ROOT, c, "course-grade")
                os.makedirs(parent, exist_ok=True)
                os.chmod(parent, 0o711)  # a student may read its own cgroup's limits, not list the others
                self.dirs.append(os.path.join(parent, name))
                os.mkdir(self.dirs[-1])
                os.chmod(self.dirs[-1], 0o755)
            mem, pids, cpu = self.dirs
            _write(os.path.join(mem, "memory.limit_in_bytes"), str(memory_mb << 20))
            try:  # no swap beyond the limit, where swap accounting exists
                _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(memory_mb << 20))
            except OSError:
                pass
            _write(os.path.join(pids, "pids.max"), str(nproc))
            _write(os.path.join(cpu, "cpu.cfs_period_us"), "100000")
            _write(os.path.join(cpu, "cpu.cfs_quota_us"), str(quota))
        elif self.version == "v2":
            base = _cgroup2_base()
            assert base
            parent = os.path.join(base, "course-grade")
            os.makedirs(parent, exist_ok=True)
            os.chmod(parent, 0o711)
            for d in (base, parent):
                try:
                    _write(os.path.join(d, "cgroup.subtree_control"), "+memory +pids +cpu")
                except OSError:
                    pass
            self.dirs = [os.path.join(parent, name)]
            os.mkdir(self.dirs[0])
            os.chmod(self.dirs[0], 0o755)
            d = self.dirs[0]
            _write(os.path.join(d, "memory.max"), str(memory_mb << 20))
            try:
                _write(os.path.join(d, "memory.swap.max"), "0")
            except OSError:
                pass
            _write(os.path.join(d, "pids.max"), str(nproc))
            _write(os.path.join(d, "cpu.max"), f"{quota} 100000")
        else:
            raise OSError(0, "no writable cgroup hierarchy")

    @classmethod
    def existing(cls, dirs: list[str]) -> "CGroup":
        """The cgroup already made in ``dirs`` (one left by a grader that died), to kill and remove."""
        group = cls.__new__(cls)
        group.version, group.dirs = cgroup_version(), list(dirs)
        return group

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a process writes "0" to, to join (before any untrusted code)."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs]

    def pids(self) -> list[int]:
        out: set[int] = set()
        for f in self.procs_files:
            try:
                with open(f) as fh:
                    out.update(int(x) for x in fh.read().split())
            except OSError:
                pass
        return sorted(out)

    def kill(self) -> None:
        if self.version == "v2" and os.path.exists(os.path.join(self.dirs[0], "cgroup.kill")):
            try:
                _write(os.path.join(self.dirs[0], "cgroup.kill"), "1")
            except OSError:
                pass
        for _ in range(100):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            import time

            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for d in self.dirs:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    import time

                    time.sleep(0.02)


def _parents() -> list[str]:
    """The ``course-grade`` folders the boxes' cgroups are made in, on this machine."""
    if cgroup_version() == "v1":
        return [os.path.join(CGROUP_ROOT, c, "course-grade") for c in CGROUP_V1]
    base = _cgroup2_base()
    return [os.path.join(base, "course-grade")] if base else []


def sweep(gone) -> list[str]:
    """The box cgroups (``box-<grader pid>-<hex>``) whose grader is gone (``gone(pid)``): what is still
    in one is killed, then it is removed.  The cgroups removed."""
    import re

    removed = []
    for parent in _parents():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(r"box-(\d+)-[0-9a-f]+", name)
            d = os.path.join(parent, name)
            if not m or not gone(int(m.group(1))) or not os.path.isdir(d):
                continue
            CGroup.existing([d]).remove()
            if not os.path.exists(d):
                removed.append(d)
    return removed
