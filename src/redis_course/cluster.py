"""A real Redis Cluster on one machine: three primaries and three replicas, owned by the course.

    course cluster start     # six redis-server processes on free ports of 127.0.0.1
    course cluster status    # who is primary, which slots, how many keys
    course cluster stop      # stops them all and removes their data

In Python (a notebook, a test)::

    with local_cluster() as cluster:           # started here, stopped when the block ends
        rc = cluster.client()                  # a redis-py RedisCluster with .key() and .cleanup()
        rc.incr(rc.key("views"))

Each node is ``redis-server --cluster-enabled yes`` with its own data directory under one temporary
directory; the cluster is created with ``redis-cli --cluster create ... --cluster-replicas 1
--cluster-yes``.  ``course cluster start`` writes ``build/cluster.json`` (ports, process ids, data
directory) so that ``status`` and ``stop`` find the cluster from another process.  A cluster started
from Python is stopped when its ``with`` block ends or, at the latest, when the process exits.

:func:`key_slot` is the slot function of the cluster specification (CRC16/XMODEM of the key, or of
its hash tag, modulo 16384) in pure Python, so a lesson can show slots where no cluster runs.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import random
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import redis
from redis.cluster import RedisCluster

from . import paths
from .backend import PROTOCOL, CourseError, _CourseClient, run_prefix
from .l10n import _
from .messages import msg
from .servers import RedisServerMissing, redis_server_binary

SLOTS = 16384
STATE_FILE = paths.BUILD / "cluster.json"
NODE_TIMEOUT_MS = 1000  # a primary that does not answer for 1 s is failed over (default 15 s)


# ====================================================================== slots, in pure Python

def _crc16_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _attempt in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_TABLE = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster uses."""
    crc = 0
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def hash_tag(key: str | bytes) -> bytes:
    """The part of ``key`` that is hashed: the text between the first ``{`` and the next ``}``, if
    that text is not empty; otherwise the whole key."""
    k = key.encode() if isinstance(key, str) else bytes(key)
    start = k.find(b"{")
    if start != -1:
        end = k.find(b"}", start + 1)
        if end > start + 1:
            return k[start + 1:end]
    return k


def key_slot(key: str | bytes) -> int:
    """The hash slot of ``key`` (what ``CLUSTER KEYSLOT key`` answers): CRC16(tag or key) mod 16384."""
    return crc16(hash_tag(key)) % SLOTS


def same_slot(*keys: str | bytes) -> bool:
    """True if all ``keys`` hash to one slot (a multi-key command or a script on them is allowed)."""
    return len({key_slot(k) for k in keys}) <= 1


def default_primary(slot: int, primaries: int = 3) -> int:
    """Which primary (0, 1, 2, ...) holds ``slot`` when ``redis-cli --cluster create`` split the slots
    evenly, as it does: for three primaries 0-5460, 5461-10922, 10923-16383."""
    per = SLOTS / primaries
    for i in range(primaries):
        if slot <= round((i + 1) * per) - 1:
            return i
    return primaries - 1


# ====================================================================== the course's cluster client

class CourseCluster(_CourseClient, RedisCluster):
    """redis-py's RedisCluster on a cluster the course owns, with the course's key namespace.

    ``.key(*parts)`` builds names under the run's prefix; ``.cleanup()`` deletes this run's keys on
    every primary (SCAN MATCH on each, then UNLINK split by slot); ``.node_of(key)`` names the
    primary that holds a key.
    """

    def course_keys(self, pattern: str = "*") -> list[str]:
        """This run's keys matching ``pattern`` on all primaries (SCAN on each: O(N)), sorted."""
        found: set[str] = set()
        for node in self.get_primaries():
            found.update(self.get_redis_connection(node).scan_iter(match=self.prefix + pattern, count=1000))
        return sorted(found)

    def cleanup(self) -> int:
        """Delete this run's keys and nothing else (SCAN each primary, UNLINK slot by slot)."""
        deleted = 0
        for node in self.get_primaries():
            conn = self.get_redis_connection(node)
            by_slot: dict[int, list[str]] = {}
            for k in conn.scan_iter(match=self.prefix + "*", count=1000):
                by_slot.setdefault(key_slot(k), []).append(k)
            for keys in by_slot.values():
                deleted += conn.unlink(*keys)
        return deleted

    def node_of(self, key: str) -> str:
        """``host:port`` of the primary that holds ``key`` now (from the client's slot table)."""
        node = self.get_node_from_key(key)
        return f"{node.host}:{node.port}"

    def server_version(self) -> str:
        return str(self.get_redis_connection(self.get_primaries()[0]).info("server").get("redis_version", "?"))

    def describe(self) -> str:
        primaries = sorted(f"{n.host}:{n.port}" for n in self.get_primaries())
        return "backend: " + _("Redis Cluster {version}, {n} primaries ({nodes}); key prefix {prefix}",
                               version=self.server_version(), n=len(primaries), nodes=", ".join(primaries),
                               prefix=self.prefix)


def connect_cluster(nodes: list[tuple[str, int]] | None = None, *, prefix: str | None = None,
                    **kwargs) -> CourseCluster:
    """A :class:`CourseCluster` on ``nodes`` (default: the cluster of ``build/cluster.json``).

    Asks one node for the slot table (CLUSTER SLOTS), then sends each command to the primary of its
    key, following MOVED and ASK redirections itself.
    """
    if nodes is None:
        state = LocalCluster.load()
        if state is None:
            raise CourseError(_("No course cluster is running; start one with `python3 run.py cluster start`."))
        nodes = [("127.0.0.1", p) for p in state.ports]
    from redis.cluster import ClusterNode

    kwargs.setdefault("socket_timeout", 5)
    kwargs.setdefault("socket_connect_timeout", 2)
    rc = CourseCluster(startup_nodes=[ClusterNode(h, p) for h, p in nodes], decode_responses=True,
                       protocol=PROTOCOL, **kwargs)
    rc.backend, rc.prefix, rc.owned = "redis-cluster", (prefix if prefix is not None else run_prefix()), True
    rc.where = ", ".join(f"{h}:{p}" for h, p in nodes)
    return rc


# ====================================================================== the cluster's processes

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
    raise CourseError(msg("server_start_failed", port="?", detail=_("no free pair of ports (a port and the port 10000 above it)")))


def redis_cli_binary() -> str | None:
    server = redis_server_binary()
    beside = Path(server).with_name("redis-cli") if server else None
    return shutil.which("redis-cli") or (str(beside) if beside and beside.exists() else None)


def cluster_available() -> bool:
    """True when ``redis-server`` and ``redis-cli`` are installed (a cluster can be started here)."""
    return bool(redis_server_binary() and redis_cli_binary())


_running: set["LocalCluster"] = set()


@dataclass(eq=False)
class LocalCluster:
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
    detached: bool = False   # started by `course cluster start`: outlives this process
    _procs: dict[int, subprocess.Popen] = field(default_factory=dict, repr=False)

    # -- state file ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"primaries": self.primaries, "replicas": self.replicas, "node_timeout_ms": self.node_timeout_ms,
                "data_dir": str(self.data_dir), "ports": self.ports, "pids": {str(p): pid for p, pid in self.pids.items()}}

    @classmethod
    def load(cls, path: Path = STATE_FILE) -> "LocalCluster | None":
        """The cluster described by ``path``, or None if there is no state file."""
        if not path.exists():
            return None
        d = json.loads(path.read_text(encoding="utf-8"))
        return cls(primaries=d["primaries"], replicas=d["replicas"], node_timeout_ms=d["node_timeout_ms"],
                   data_dir=Path(d["data_dir"]), ports=list(d["ports"]),
                   pids={int(p): pid for p, pid in d["pids"].items()}, detached=True)

    def save(self, path: Path = STATE_FILE) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")

    # -- processes -----------------------------------------------------------------------------
    def _node_args(self, port: int) -> list[str]:
        d = Path(self.data_dir) / str(port)
        return [redis_server_binary() or "redis-server", "--bind", "127.0.0.1", "--port", str(port),
                "--dir", str(d), "--daemonize", "no", "--protected-mode", "no",
                "--logfile", str(d / "redis.log"), "--save", "", "--appendonly", "no",
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(self.node_timeout_ms),
                # a replica's first sync starts at once (the default waits 5 s for more replicas)
                "--repl-diskless-sync-delay", "0"]

    def _spawn(self, port: int) -> None:
        (Path(self.data_dir) / str(port)).mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(self._node_args(port), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=None if self.detached else _die_with_parent)
        self._procs[port], self.pids[port] = proc, proc.pid

    def node(self, port: int, timeout: float = 2.0) -> redis.Redis:
        """A plain client on one node (not cluster-aware: it does not follow MOVED)."""
        return redis.Redis(host="127.0.0.1", port=port, decode_responses=True, protocol=PROTOCOL,
                           socket_timeout=timeout, socket_connect_timeout=timeout)

    def _wait_ping(self, port: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            proc = self._procs.get(port)
            if proc is not None and proc.poll() is not None:
                log = Path(self.data_dir) / str(port) / "redis.log"
                tail = log.read_text(errors="replace").strip().splitlines()[-2:] if log.exists() else []
                raise CourseError(msg("server_start_failed", port=port, detail=" / ".join(tail) or
                                      _("exit code {code}", code=proc.returncode)))
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
            out = subprocess.run([cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                                  "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                                 capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
            if out.returncode != 0:
                raise CourseError(_("redis-cli --cluster create did not finish: {detail}", detail=(out.stderr or out.stdout).strip()[-300:]))
            self.wait_ok(timeout=max(1.0, deadline - time.monotonic()))
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ok(self, timeout: float = 20.0, ports: list[int] | None = None) -> None:
        """Wait until every live node (or ``ports``) reports ``cluster_state:ok`` and the same
        number of nodes, every slot has a primary and every replica is in sync with its primary."""
        ports = ports or [p for p in self.ports if self.alive(p)]
        deadline = time.monotonic() + timeout
        while True:
            try:
                infos = [self.node(p).cluster("info") for p in ports]
                ok = all(i.get("cluster_state") == "ok" and int(i.get("cluster_slots_ok", 0)) == SLOTS
                         and int(i.get("cluster_known_nodes", 0)) == len(self.ports) for i in infos)
                # and every replica has finished its first sync with its primary
                if ok and all(self.node(p).info("replication").get("master_link_status", "up") == "up"
                              for p in ports):
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

    # -- looking at it ---------------------------------------------------------------------------
    def client(self, prefix: str | None = None, **kwargs) -> CourseCluster:
        return connect_cluster([("127.0.0.1", p) for p in self.ports if self.alive(p)], prefix=prefix, **kwargs)

    def topology(self) -> list[dict]:
        """One row per live node: port, role, primary's port (replicas), slot ranges, keys."""
        live = [p for p in self.ports if self.alive(p)]
        if not live:
            return []
        nodes = self.node(live[0]).cluster("nodes")
        by_id = {}
        rows = []
        for addr, info in nodes.items():
            port = int(addr.split("@")[0].rsplit(":", 1)[1])
            by_id[info["node_id"]] = port
            rows.append((port, info))
        out = []
        for port, info in sorted(rows):
            flags = info.get("flags", "")
            role = "primary" if "master" in flags else "replica"
            up = "fail" not in flags and self.alive(port)
            out.append({"port": port, "role": role, "up": up,
                        "primary": by_id.get(info.get("master_id")) if role == "replica" else None,
                        "slots": ["-".join(s) if s[0] != s[-1] else s[0] for s in info.get("slots", [])],
                        "keys": self.node(port).dbsize() if up else None})
        return out

    def primary_ports(self) -> list[int]:
        return [row["port"] for row in self.topology() if row["role"] == "primary" and row["up"]]

    def replica_of(self, primary_port: int) -> int | None:
        for row in self.topology():
            if row["role"] == "replica" and row["primary"] == primary_port and row["up"]:
                return row["port"]
        return None

    def node_id(self, port: int) -> str:
        return self.node(port).execute_command("CLUSTER", "MYID")

    def owner_of(self, slot: int) -> int:
        """The port of the primary that serves ``slot`` now (CLUSTER SLOTS on a live node)."""
        live = [p for p in self.ports if self.alive(p)]
        for start, end, primary, *_rest in self.node(live[0]).execute_command("CLUSTER", "SLOTS"):
            if int(start) <= slot <= int(end):
                return int(primary[1])
        raise CourseError(_("Slot {slot} has no primary.", slot=slot))

    # -- resharding one slot, step by step (what `redis-cli --cluster reshard` does) -------------
    def begin_slot_move(self, slot: int, to_port: int) -> int:
        """Mark ``slot`` MIGRATING on its primary and IMPORTING on ``to_port``; return the source port.
        From now on the source answers ASK for keys of the slot it no longer has."""
        src = self.owner_of(slot)
        self.node(to_port).execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", self.node_id(src))
        self.node(src).execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", self.node_id(to_port))
        return src

    def migrate(self, from_port: int, to_port: int, *keys: str) -> None:
        """MIGRATE ``keys`` (one slot) from one node to another: atomic per call, blocks both briefly."""
        self.node(from_port).execute_command("MIGRATE", "127.0.0.1", to_port, "", 0, 5000, "KEYS", *keys)

    def finish_slot_move(self, slot: int, to_port: int) -> None:
        """CLUSTER SETSLOT slot NODE <to> on every primary: the slot now belongs to ``to_port``; the
        old owner answers MOVED."""
        dst = self.node_id(to_port)
        for port in [to_port] + [p for p in self.primary_ports() if p != to_port]:
            self.node(port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst)

    # -- failover ------------------------------------------------------------------------------
    def wait_failover(self, dead_port: int, timeout: float = 20.0, takeover_after: float = 8.0) -> int:
        """After ``dead_port`` (a primary) died: wait until one of its replicas is a primary and every
        live node says cluster_state:ok; return the new primary's port.

        The cluster fails over by itself after about two node timeouts (an election among the
        primaries).  If that has not happened after ``takeover_after`` seconds (a machine so loaded
        that the election keeps timing out), the replica is told ``CLUSTER FAILOVER TAKEOVER``, as an
        operator would."""
        start = time.monotonic()
        deadline = start + timeout
        replicas = [row["port"] for row in self.topology() if row["primary"] == dead_port]
        forced = False
        while time.monotonic() < deadline:
            if not forced and time.monotonic() - start > takeover_after:
                with contextlib.suppress(redis.exceptions.RedisError):
                    live = [p for p in replicas if self.alive(p)]
                    if live:
                        self.node(live[0]).execute_command("CLUSTER", "FAILOVER", "TAKEOVER")
                        forced = True
            with contextlib.suppress(redis.exceptions.RedisError):
                for port in replicas:
                    if self.alive(port) and self.node(port).info("replication").get("role") == "master":
                        live = [p for p in self.ports if self.alive(p)]
                        if all(self.node(p).cluster("info").get("cluster_state") == "ok" for p in live):
                            return port
            time.sleep(0.05)
        raise CourseError(_("No replica of 127.0.0.1:{port} took over within {seconds:g} s.", port=dead_port, seconds=timeout))

    # -- load, per node ----------------------------------------------------------------------------
    def reset_stats(self) -> None:
        """CONFIG RESETSTAT on every live node (the nodes are the course's own)."""
        for port in self.ports:
            if self.alive(port):
                self.node(port).config_resetstat()

    def incr_calls(self) -> dict[int, int]:
        """INCR calls per live primary since the last :meth:`reset_stats` (INFO commandstats)."""
        out = {}
        for port in self.primary_ports():
            stats = self.node(port).info("commandstats")
            out[port] = sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("incr", "incrby"))
        return out

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


# ====================================================================== load

def drive_incr(rc: CourseCluster, pick_key, seconds: float = 1.0, threads: int = 2, batch: int = 100) -> int:
    """INCR keys chosen by ``pick_key()`` as fast as ``threads`` threads can, in pipelines of ``batch``
    (a cluster pipeline sends one batch per primary), for ``seconds``; return how many were counted."""
    import threading

    done = [0] * threads
    stop = time.monotonic() + seconds

    def work(i: int) -> None:
        client = connect_cluster([(n.host, n.port) for n in rc.get_primaries()], prefix=rc.prefix)
        while time.monotonic() < stop:
            pipe = client.pipeline()
            for _i in range(batch):
                pipe.incr(pick_key())
            done[i] += len(pipe.execute())
        client.close()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(done)


# ====================================================================== `course cluster ...`

def cli_start(state_file: Path = STATE_FILE) -> int:
    existing = LocalCluster.load(state_file)
    if existing is not None and any(existing.alive(p) for p in existing.ports):
        raise CourseError(_("A course cluster is already running on ports {ports}; stop it first with `python3 run.py cluster stop`.", ports=", ".join(map(str, existing.ports))))
    cluster = LocalCluster(detached=True)
    cluster.start()
    cluster.save(state_file)
    print(_("Redis Cluster started: {primaries} primaries, {replicas} replicas, data in {data}.",
            primaries=cluster.primaries, replicas=cluster.primaries * cluster.replicas, data=cluster.data_dir))
    print(f"  redis-cli -c -p {cluster.ports[0]}")
    print("  " + _("state: {path}", path=state_file))
    return 0


def cli_status(state_file: Path = STATE_FILE) -> int:
    cluster = LocalCluster.load(state_file)
    if cluster is None:
        print(_("No course cluster is running; start one with `python3 run.py cluster start`."))
        return 1
    live = [p for p in cluster.ports if cluster.alive(p)]
    if not live:
        print(_("No course cluster is running; start one with `python3 run.py cluster start`."))
        return 1
    state = cluster.node(live[0]).cluster("info").get("cluster_state")
    print(_("cluster_state: {state}   nodes running: {live} of {total}   data: {data}", state=state,
            live=len(live), total=len(cluster.ports), data=cluster.data_dir))
    for row in cluster.topology():
        role = _("primary") if row["role"] == "primary" else _("replica of {node}", node=row["primary"])
        up = _("up") if row["up"] else _("DOWN")
        slots = (" ".join(row["slots"]) or "-").ljust(12)
        keys = row["keys"] if row["keys"] is not None else "-"
        print(f"  127.0.0.1:{row['port']}  {up:<6} {role:<20} "
              + _("slots {slots}", slots=slots) + " " + _("keys {keys}", keys=keys))
    return 0 if state == "ok" else 1


def cli_stop(state_file: Path = STATE_FILE) -> int:
    cluster = LocalCluster.load(state_file)
    if cluster is None:
        print(_("No course cluster is running; start one with `python3 run.py cluster start`."))
        return 0
    cluster.stop()
    state_file.unlink(missing_ok=True)
    print(_("Redis Cluster stopped ({nodes} nodes); {data} removed.", nodes=len(cluster.ports), data=cluster.data_dir))
    return 0
