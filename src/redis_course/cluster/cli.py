"""``python3 run.py cluster start|status|stop``: a local cluster that outlives the command, found
again through ``build/cluster.json``."""

from __future__ import annotations

from pathlib import Path

from ..core.backend import CourseError
from ..l10n import _
from .nodes import STATE_FILE, LocalCluster


def cli_start(state_file: Path = STATE_FILE) -> int:
    existing = LocalCluster.load(state_file)
    if existing is not None and any(existing.alive(p) for p in existing.ports):
        raise CourseError(
            _(
                "A course cluster is already running on ports {ports}; stop it first with `python3 run.py cluster stop`.",
                ports=", ".join(map(str, existing.ports)),
            )
        )
    cluster = LocalCluster(detached=True)
    cluster.start()
    cluster.save(state_file)
    print(
        _(
            "Redis Cluster started: {primaries} primaries, {replicas} replicas, data in {data}.",
            primaries=cluster.primaries,
            replicas=cluster.primaries * cluster.replicas,
            data=cluster.data_dir,
        )
    )
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
    print(
        _(
            "cluster_state: {state}   nodes running: {live} of {total}   data: {data}",
            state=state,
            live=len(live),
            total=len(cluster.ports),
            data=cluster.data_dir,
        )
    )
    for row in cluster.topology():
        role = _("primary") if row["role"] == "primary" else _("replica of {node}", node=row["primary"])
        up = _("up") if row["up"] else _("DOWN")
        slots = (" ".join(row["slots"]) or "-").ljust(12)
        keys = row["keys"] if row["keys"] is not None else "-"
        print(
            f"  127.0.0.1:{row['port']}  {up:<6} {role:<20} "
            + _("slots {slots}", slots=slots)
            + " "
            + _("keys {keys}", keys=keys)
        )
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
