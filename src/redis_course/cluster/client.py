"""The course's client for a Redis Cluster: redis-py's RedisCluster with the course's key namespace."""

from __future__ import annotations

import time

from redis.cluster import RedisCluster

from ..core.backend import PROTOCOL, _CourseClient, run_prefix
from ..l10n import _
from .slots import key_slot


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
        what = _(
            "Redis Cluster {version}, {n} primaries ({nodes}); key prefix {prefix}",
            version=self.server_version(),
            n=len(primaries),
            nodes=", ".join(primaries),
            prefix=self.prefix,
        )
        return _("backend: {description}", description=what)


def connect_cluster(nodes: list[tuple[str, int]], *, prefix: str | None = None, **kwargs) -> CourseCluster:
    """A :class:`CourseCluster` on ``nodes`` (the course's own cluster: ``LocalCluster.connect()``).

    Asks one node for the slot table (CLUSTER SLOTS), then sends each command to the primary of its
    key, following MOVED and ASK redirections itself.
    """
    from redis.cluster import ClusterNode

    kwargs.setdefault("socket_timeout", 5)
    kwargs.setdefault("socket_connect_timeout", 2)
    rc = CourseCluster(
        startup_nodes=[ClusterNode(h, p) for h, p in nodes], decode_responses=True, protocol=PROTOCOL, **kwargs
    )
    rc.backend, rc.prefix, rc.owned = "redis-cluster", (prefix if prefix is not None else run_prefix()), True
    rc.where = ", ".join(f"{h}:{p}" for h, p in nodes)
    return rc


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
