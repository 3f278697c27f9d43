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

In pieces: :mod:`.slots` (slot maths), :mod:`.client` (the course's cluster client), :mod:`.nodes`
(the processes), :mod:`.topology` (roles, slots, moves and failovers of a running cluster),
:mod:`.cli` (``python3 run.py cluster ...``).
"""

from __future__ import annotations

from .cli import cli_start, cli_status, cli_stop
from .client import CourseCluster, connect_cluster, drive_incr
from .nodes import (
    NODE_TIMEOUT_MS,
    STATE_FILE,
    LocalCluster,
    _is_our_server,
    cluster_available,
    cluster_port,
    local_cluster,
    redis_cli_binary,
)
from .slots import SLOTS, crc16, default_primary, hash_tag, key_slot, same_slot

__all__ = [
    "SLOTS",
    "STATE_FILE",
    "NODE_TIMEOUT_MS",
    "CourseCluster",
    "LocalCluster",
    "cli_start",
    "cli_status",
    "cli_stop",
    "cluster_available",
    "cluster_port",
    "connect_cluster",
    "crc16",
    "default_primary",
    "drive_incr",
    "hash_tag",
    "key_slot",
    "local_cluster",
    "redis_cli_binary",
    "same_slot",
    "_is_our_server",
]
