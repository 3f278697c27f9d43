"""What a running local cluster looks like, and the operations lesson 06 performs on it: roles, slots,
keys per node, moving a slot (CLUSTER SETSLOT + MIGRATE), waiting for a failover, INCR counts."""

from __future__ import annotations

import contextlib
import time

import redis

from ..core.backend import CourseError
from ..l10n import _
from .client import CourseCluster, connect_cluster


class ClusterTopology:
    """Mixed into :class:`~redis_course.cluster.nodes.LocalCluster`: needs ``ports``, ``node(port)``
    and ``alive(port)`` from it."""

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
            out.append(
                {
                    "port": port,
                    "role": role,
                    "up": up,
                    "primary": by_id.get(info.get("master_id")) if role == "replica" else None,
                    "slots": ["-".join(s) if s[0] != s[-1] else s[0] for s in info.get("slots", [])],
                    "keys": self.node(port).dbsize() if up else None,
                }
            )
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
        raise CourseError(
            _("No replica of 127.0.0.1:{port} took over within {seconds:g} s.", port=dead_port, seconds=timeout)
        )

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
