"""The processes of a local cluster: six ``redis-server --cluster-enabled yes`` on free ports of
127.0.0.1 with their data under one temporary directory, created with ``redis-cli --cluster create``;
started, stopped, killed, paused and resumed one by one; stopped when the ``with`` block or the
process that started them ends (unless ``course cluster start`` detached them)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import redis

from .. import paths
from ..core.backend import PROTOCOL, CourseError
from ..l10n import _
from ..l10n.messages import msg
from ..core.servers import RedisServerMissing, redis_server_binary
from .slots import SLOTS
from .topology import ClusterTopology

STATE_FILE = paths.BUILD / "cluster.json"
NODE_TIMEOUT_MS = 1000  # a primary that does not answer for 1 s is failed over (default 15 s)

BUS_OFFSET = 10000  # each node also listens on port + 10000 for the cluster bus


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_port() -> int:
    """A free port for a node whose cluster-bus port (port + 10000) is free too (both below 65536)."""
    rng = random.SystemRandom()
    for _attempt in range(200):
        port = rng.randrange(20000, 55000)
        if _port_free(port) and _port_free(port + BUS_OFFSET):
            return port
    raise CourseError(
        msg("server_start_failed", port="?", detail=_("no free pair of ports (a port and the port 10000 above it)"))
    )


def redis_cli_binary() -> str | None:
    server = redis_server_binary()
    beside = Path(server).with_name("redis-cli") if server else None
    return shutil.which("redis-cli") or (str(beside) if beside and beside.exists() else None)


def cluster_available() -> bool:
    """True when ``redis-server`` and ``redis-cli`` are installed (a cluster can be started here)."""
    return bool(redis_server_binary() and redis_cli_binary())


_running: set["LocalCluster"] = set()


@dataclass(eq=False)
class LocalCluster(ClusterTopology):
    """Six (by default) ``redis-server`` processes in cluster mode on 127.0.0.1.

    ``start()`` / ``stop()`` / ``kill(port)`` (SIGKILL one node) / ``pause(port)`` and ``resume(port)``
    (SIGSTOP / SIGCONT) / ``client()`` / ``node(port)`` (a plain client on one node) / ``wait_ok()``.
    """

    primaries: int = 3
    replicas: int = 1
    node_timeout_ms: int = NODE_TIMEOUT_MS
    data_dir: Path | None = None
    ports: list[int] = field(default_factory=list)
    pids: dict[int, int] = field(default_factory=dict)
    detached: bool = False  # started by `course cluster start`: outlives this process
    _procs: dict[int, subprocess.Popen] = field(default_factory=dict, repr=False)

    # -- state file ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "primaries": self.primaries,
            "replicas": self.replicas,
            "node_timeout_ms": self.node_timeout_ms,
            "data_dir": str(self.data_dir),
            "ports": self.ports,
            "pids": {str(p): pid for p, pid in self.pids.items()},
        }

    @classmethod
    def load(cls, path: Path = STATE_FILE) -> "LocalCluster | None":
        """The cluster described by ``path``, or None if there is no state file."""
        if not path.exists():
            return None
        d = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            primaries=d["primaries"],
            replicas=d["replicas"],
            node_timeout_ms=d["node_timeout_ms"],
            data_dir=Path(d["data_dir"]),
            ports=list(d["ports"]),
            pids={int(p): pid for p, pid in d["pids"].items()},
            detached=True,
        )

    def save(self, path: Path = STATE_FILE) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")

    # -- processes -----------------------------------------------------------------------------
    def _node_args(self, port: int) -> list[str]:
        d = Path(self.data_dir) / str(port)
        return [
            redis_server_binary() or "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            str(d),
            "--daemonize",
            "no",
            "--protected-mode",
            "no",
            "--logfile",
            str(d / "redis.log"),
            "--save",
            "",
            "--appendonly",
            "no",
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(self.node_timeout_ms),
            # a replica's first sync starts at once (the default waits 5 s for more replicas)
            "--repl-diskless-sync-delay",
            "0",
        ]

    def _spawn(self, port: int) -> None:
        (Path(self.data_dir) / str(port)).mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            self._node_args(port),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=None if self.detached else _die_with_parent,
        )
        self._procs[port], self.pids[port] = proc, proc.pid

    def node(self, port: int, timeout: float = 2.0) -> redis.Redis:
        """A plain client on one node (not cluster-aware: it does not follow MOVED)."""
        return redis.Redis(
            host="127.0.0.1",
            port=port,
            decode_responses=True,
            protocol=PROTOCOL,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )

    def _wait_ping(self, port: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            proc = self._procs.get(port)
            if proc is not None and proc.poll() is not None:
                log = Path(self.data_dir) / str(port) / "redis.log"
                tail = log.read_text(errors="replace").strip().splitlines()[-2:] if log.exists() else []
                raise CourseError(
                    msg(
                        "server_start_failed",
                        port=port,
                        detail=" / ".join(tail) or _("exit code {code}", code=proc.returncode),
                    )
                )
            with contextlib.suppress(redis.exceptions.RedisError):
                if self.node(port, 0.5).ping():
                    return
            time.sleep(0.02)
        raise CourseError(msg("server_start_failed", port=port, detail=_("it did not answer PING")))

    def start(self, timeout: float = 30.0) -> "LocalCluster":
        """Start the nodes, join them with ``redis-cli --cluster create``, wait until every node says
        ``cluster_state:ok`` and knows every other node."""
        if not redis_server_binary():
            raise RedisServerMissing(msg("no_redis_server"))
        cli = redis_cli_binary()
        if not cli:
            raise CourseError(_("This needs the `redis-cli` program (package redis-tools), and it is not installed."))
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="course-cluster-"))
        n = self.primaries * (1 + self.replicas)
        while len(self.ports) < n:
            p = cluster_port()
            if p not in self.ports and p + BUS_OFFSET not in self.ports:
                self.ports.append(p)
        _running.add(self)
        try:
            for port in self.ports:
                self._spawn(port)
            deadline = time.monotonic() + timeout
            for port in self.ports:
                self._wait_ping(port, deadline)
            out = subprocess.run(
                [
                    cli,
                    "--cluster",
                    "create",
                    *(f"127.0.0.1:{p}" for p in self.ports),
                    "--cluster-replicas",
                    str(self.replicas),
                    "--cluster-yes",
                ],
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
            if out.returncode != 0:
                raise CourseError(
                    _(
                        "redis-cli --cluster create did not finish: {detail}",
                        detail=(out.stderr or out.stdout).strip()[-300:],
                    )
                )
            self.wait_ok(timeout=max(1.0, deadline - time.monotonic()))
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ok(self, timeout: float = 20.0, ports: list[int] | None = None) -> None:
        """Wait until every live node (or ``ports``) reports ``cluster_state:ok`` and the same
        number of nodes, every slot has a primary, every node sees every replica as a replica, and
        every replica is in sync with its primary."""
        ports = ports or [p for p in self.ports if self.alive(p)]
        deadline = time.monotonic() + timeout
        while True:
            try:
                infos = [self.node(p).cluster("info") for p in ports]
                ok = all(
                    i.get("cluster_state") == "ok"
                    and int(i.get("cluster_slots_ok", 0)) == SLOTS
                    and int(i.get("cluster_known_nodes", 0)) == len(self.ports)
                    for i in infos
                )
                # every node sees every replica as one (a node told CLUSTER REPLICATE is a primary
                # without slots in the others' views until gossip carries its new role), and every
                # replica has finished its first sync with its primary
                replicas = self.primaries * self.replicas
                ok = ok and all(
                    sum("slave" in n.get("flags", "") for n in self.node(p).cluster("nodes").values()) == replicas
                    for p in ports
                )
                if ok and all(self.node(p).info("replication").get("master_link_status", "up") == "up" for p in ports):
                    return
            except redis.exceptions.RedisError:
                pass
            if time.monotonic() > deadline:
                detail = _("cluster_state is not ok")
                raise CourseError(_("redis-cli --cluster create did not finish: {detail}", detail=detail))
            time.sleep(0.05)

    def alive(self, port: int) -> bool:
        """True if the node's process is running (whoever started it)."""
        proc = self._procs.get(port)
        if proc is not None:
            return proc.poll() is None
        pid = self.pids.get(port)
        return bool(pid) and _is_our_server(pid, port)

    def kill(self, port: int) -> None:
        """SIGKILL one node, as a crash would: it writes nothing more and answers nobody."""
        self._signal(port, signal.SIGKILL)
        proc = self._procs.get(port)
        if proc is not None:
            proc.wait(5)

    def pause(self, port: int) -> None:
        """SIGSTOP one node: it is frozen (no replies, no replication, no cluster bus) until resumed."""
        self._signal(port, signal.SIGSTOP)

    def resume(self, port: int) -> None:
        self._signal(port, signal.SIGCONT)

    def _signal(self, port: int, sig: int) -> None:
        pid = self.pids.get(port)
        if pid and self.alive(port):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def restart(self, port: int) -> None:
        """Start a killed node again on its data directory (it rejoins with its nodes.conf)."""
        if not self.alive(port):
            self._spawn(port)
            self._wait_ping(port, time.monotonic() + 10)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every node (SIGCONT, then SIGTERM; SIGKILL after ``timeout``), wait until no process is
        left and remove the data directory."""
        for port in self.ports:
            self._signal(port, signal.SIGCONT)
            self._signal(port, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for port in self.ports:
            while self.alive(port) and time.monotonic() < deadline:
                proc = self._procs.get(port)
                if proc is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(0.05)
                else:
                    time.sleep(0.05)
            if self.alive(port):
                self._signal(port, signal.SIGKILL)
                if port in self._procs:
                    self._procs[port].wait(5)
        _running.discard(self)
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _die_with_parent() -> None:
    """In the node's process before exec: SIGTERM it when the thread that started it ends, so a
    notebook kernel or a test that is killed leaves no cluster behind (Linux prctl PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _is_our_server(pid: int, port: int) -> bool:
    """True if process ``pid`` is a redis-server on ``port`` (a reused pid is not ours to stop)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":  # a zombie has finished
        return False
    # redis-server rewrites its title to "/usr/bin/redis-server 127.0.0.1:7000 [cluster]"
    title = b" ".join(cmdline)
    return b"redis-server" in title and (f":{port} ".encode() in title + b" " or str(port).encode() in cmdline)


@contextlib.contextmanager
def local_cluster(**kwargs) -> Iterator[LocalCluster]:
    """A cluster for the ``with`` block: started, then stopped with its data removed."""
    cluster = LocalCluster(**kwargs)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@atexit.register
def _stop_all() -> None:
    for cluster in list(_running):
        if not cluster.detached:
            with contextlib.suppress(Exception):
                cluster.stop(timeout=3)
