"""Private ``redis-server`` processes that the course starts, owns and stops.

Demos that need server-wide commands (FLUSHALL, CONFIG SET, DEBUG, SHUTDOWN, restarts, persistence
settings) run them here, never on the reader's own server.  Each server gets a free port on
127.0.0.1 (or a Unix socket), its own temporary data directory, and is stopped when the ``with``
block ends, or at the latest when the Python process exits.  Lessons, tests and the grader all start
their servers with :class:`PrivateRedis`.

The grader's server (``users=True, confine=True``) serves untrusted code:

* ACL users: ``default`` is off, ``grader`` may do everything, ``student`` (:attr:`student_url`, made
  once the server answers, from its own command table: :func:`student_rules`) may
  not run a command that reaches beyond its own data (MIGRATE, REPLICAOF/SLAVEOF, SYNC/PSYNC,
  CONFIG, MONITOR, CLIENT KILL/PAUSE, DEBUG, MODULE, SHUTDOWN, SAVE/BGSAVE, ACL, FAILOVER, CLUSTER
  administration, SCRIPT KILL, FUNCTION FLUSH/KILL...), so ``maxmemory`` set here stays; only
  password hashes are written to disk.  This holds on Redis 6, where DEBUG, MODULE LOAD and
  ``CONFIG SET dir`` are not switched off by default.
* ``confine``: the walls of the box the server runs in (:class:`.labs.sandbox.server.ServerWalls`:
  bubblewrap, no network, a uid of the box's own when started by root): its ``wrap(argv, server)``
  gives the command line, its ``uid`` owns the server's folders.

``COURSE_REDIS_SERVER_ARGS`` (shell words) is appended to every server's command line: tests use
it to give Redis 7 the permissive defaults of Redis 6.

    with private_redis(persistence="aof-everysec") as srv:
        r = srv.client()
        r.incr(r.key("n"))
        srv.kill()           # SIGKILL: no chance to save
        srv.start()          # same data directory: what survived?
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .backend import CourseError, connect
from ..l10n import _
from ..l10n.messages import msg

PERSISTENCE = {
    "default": [],  # the server's built-in defaults (Redis 7: save 3600 1 300 100 60 10000, appendonly no)
    "none": ["--save", "", "--appendonly", "no"],
    "rdb": ["--save", "1 1", "--appendonly", "no"],
    "aof-everysec": ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
    "aof-always": ["--save", "", "--appendonly", "yes", "--appendfsync", "always"],
    "aof-no": ["--save", "", "--appendonly", "yes", "--appendfsync", "no"],
}

_running: set["PrivateRedis"] = set()
_log = logging.getLogger(__name__)


class RedisServerMissing(CourseError):
    """The ``redis-server`` program is not installed."""


class AclRefused(CourseError):
    """The server refuses the grading user's ACL rules: starting again would not help."""


def redis_server_binary() -> str | None:
    """Path of ``redis-server`` (``COURSE_REDIS_SERVER`` overrides), or None."""
    override = os.environ.get("COURSE_REDIS_SERVER")
    if override:  # a program that does not exist there counts as missing, not as a crash later
        return shutil.which(override)
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )


def redis_server_version() -> str | None:
    binary = redis_server_binary()
    if not binary:
        return None
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    for part in out.split():
        if part.startswith("v="):
            return part[2:]
    return out.strip() or None


def _major(version: str | None) -> int:
    try:
        return int((version or "0").split(".")[0])
    except ValueError:
        return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: What the ``student`` user of a grading server may not do (besides ``-@admin``), by Redis version:
#: commands that reach other servers or files, stop or stall the server, or change what it allows.
#: A rule naming a command this server does not have is left out (see :func:`student_rules`).
STUDENT_DENY = [
    "-@admin",
    "-@dangerous",
    "+info",
    "+keys",
    "+sort",
    "+sort_ro",
    "+flushdb",
    "+role",
    "-migrate",
    "-restore",
    "-restore-asking",
    "-flushall",
    "-swapdb",
    "-config",
    "-lastsave",
    "-failover",
]
STUDENT_DENY_7 = [
    "-script|kill",
    "-function|flush",
    "-function|kill",
    "-function|restore",
    "-client|kill",
    "-client|pause",
    "-client|unpause",
    "-client|no-evict",
    "-client|unblock",
]
STUDENT_DENY_6 = [
    "-script",
    "+script|load",
    "+script|exists",
    "+script|flush",
    "-client",
    "+client|id",
    "+client|setname",
    "+client|getname",
    "+client|info",
    "+client|tracking",
    "+client|caching",
    "+client|getredir",
    "+client|trackinginfo",
]


def _version_tuple(version: str | None) -> tuple[int, int]:
    parts = [int(x) if x.isdigit() else 0 for x in (version or "7.0").split(".")[:2]] + [0, 0]
    return parts[0], parts[1]


def student_rules(version: str | None, commands: dict[str, set[str]] | None = None) -> list[str]:
    """ACL rules of the ``student`` user on a server of ``version``: the rule syntax by version (6.0
    has no channel rules, and before 7 a subcommand can be allowed but not removed), then, when
    ``commands`` (the server's own command table: name -> subcommand names, see
    :func:`server_commands`) is given, without the rules that name a command it does not have
    (``+sort_ro`` before 7.0, ``-failover`` before 6.2): a server refuses to start on those, and a
    command it lacks needs no rule.  Before 7 subcommands are not checked by the server either."""
    major, minor = _version_tuple(version)
    rules = ["~*", *(["&*"] if (major, minor) >= (6, 2) else []), "+@all", *STUDENT_DENY]
    rules += STUDENT_DENY_7 if major >= 7 else STUDENT_DENY_6
    if commands is None:
        return rules
    return [r for r in rules if _known(r, commands, check_sub=major >= 7)]


def _known(rule: str, commands: dict[str, set[str]], check_sub: bool) -> bool:
    if rule[:1] not in "+-" or rule[1:2] == "@":
        return True
    name, _bar, sub = rule[1:].lower().partition("|")
    if name not in commands:
        return False
    return not (sub and check_sub) or sub in commands[name]


def left_out(version: str | None, commands: dict[str, set[str]]) -> list[str]:
    """The rules :func:`student_rules` leaves out on a server with ``commands``."""
    kept = set(student_rules(version, commands))
    return [r for r in student_rules(version) if r not in kept]


def server_commands(client) -> dict[str, set[str]]:
    """The command table of the server ``client`` talks to: each command's name and its subcommands'
    names (Redis 7 lists them; before 7 the sets are empty).  ``COMMAND`` exists since Redis 2.8."""
    table = client.execute_command("COMMAND")
    found: dict[str, set[str]] = {}
    entries = table.items() if isinstance(table, dict) else ((e[0], e) for e in table)
    for name, info in entries:
        name = name.decode() if isinstance(name, bytes) else str(name)
        subs = (info.get("subcommands") if isinstance(info, dict) else (info[9] if len(info) > 9 else None)) or []
        found[name.lower()] = {
            (s[0].decode() if isinstance(s[0], bytes) else str(s[0])).lower().partition("|")[2] for s in subs
        }
    return found


def _acl_hash(password: str) -> str:
    return "#" + hashlib.sha256(password.encode()).hexdigest()


@dataclass(eq=False)
class PrivateRedis:
    """One private redis-server.  ``start()``, ``stop()`` (clean), ``kill()`` (SIGKILL), ``client()``.

    Grading options: ``users`` (ACL users grader/student), ``confine`` (the box's walls, see the
    module docstring), ``maxmemory``, ``single_node_cluster`` (cluster mode, one
    node with every slot, the bus on 127.0.0.1 inside the namespace)."""

    persistence: str = "none"
    port: int = 0
    unix_socket: bool = False
    extra_args: list[str] = field(default_factory=list)
    data_dir: Path | None = None
    proc: subprocess.Popen | None = None
    users: bool = False
    confine: object | None = None
    maxmemory: str | None = None
    single_node_cluster: bool = False
    log_to_file: bool = True
    _own_dir: bool = False
    left_out_rules: list[str] = field(default_factory=list)  # student rules this server has no command for

    def __post_init__(self) -> None:
        if self.persistence not in PERSISTENCE:
            raise ValueError(f"persistence must be one of {sorted(PERSISTENCE)}")
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="course-redis-"))
            self._own_dir = True
        self._secrets = {"grader": secrets.token_hex(16), "student": secrets.token_hex(16)}
        self._slots_assigned = False

    @property
    def socket_path(self) -> Path:
        """The Unix socket, alone in its folder (the folder a sandbox may see; nothing else is there)."""
        assert self.data_dir is not None
        return self.data_dir / "sock" / "redis.sock"

    @property
    def password(self) -> str | None:
        """The password given with ``--requirepass`` in ``extra_args``, if any."""
        args = list(self.extra_args)
        for i, a in enumerate(args[:-1]):
            if a == "--requirepass":
                return args[i + 1]
        return None

    def _url(self, user: str | None, password: str | None) -> str:
        from urllib.parse import quote

        auth = ""
        if password:
            auth = f"{quote(user, safe='') if user else ''}:{quote(password, safe='')}@"
        if self.unix_socket:
            return f"unix://{auth}{self.socket_path}"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def url(self) -> str:
        """The owner's URL (the ``grader`` user when ``users``): every command allowed."""
        if self.users:
            return self._url("grader", self._secrets["grader"])
        return self._url(None, self.password)

    @property
    def student_url(self) -> str:
        """The URL untrusted code gets: the ``student`` user when ``users``, else the owner's."""
        return self._url("student", self._secrets["student"]) if self.users else self.url

    def _users_file(self) -> Path:
        """The ACL users as a config file the server reads first (owner-only, password hashes only):
        ``default`` off and ``grader``; ``student`` is made once the server answers, from the commands it
        has (:meth:`_add_student`), so that no rule it does not know stops it from starting."""
        path = Path(self.data_dir) / "users.conf"
        channels = "&* " if _version_tuple(redis_server_version()) >= (6, 2) else ""
        text = f"user default off\nuser grader on {_acl_hash(self._secrets['grader'])} ~* {channels}+@all\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path

    def command_line(self) -> list[str]:
        binary = redis_server_binary()
        if not binary:
            raise RedisServerMissing(msg("no_redis_server"))
        args = [
            binary,
            *([str(self._users_file())] if self.users else []),
            "--bind",
            "127.0.0.1",
            "--port",
            "0" if self.unix_socket else str(self.port),
            "--dir",
            str(self.data_dir),
            "--daemonize",
            "no",
            "--protected-mode",
            "no",
            "--logfile",
            str(Path(self.data_dir) / "redis.log") if self.log_to_file else "",
            *PERSISTENCE[self.persistence],
        ]
        if self.unix_socket:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "777"]
        if _major(redis_server_version()) >= 7:
            # Redis 7 refuses DEBUG unless enabled; demos on a private server may use it (local clients only).
            args += ["--enable-debug-command", "local"]
        if self.maxmemory:
            args += ["--maxmemory", self.maxmemory]
        if self.single_node_cluster:
            # the cluster bus needs a TCP port (default: port + 10000, i.e. 10000 for every server with
            # --port 0): a free one, on 127.0.0.1 only (inside the server's own namespace when confined)
            args += [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-port",
                str(free_port()),
            ]
        args += list(self.extra_args) + shlex.split(os.environ.get("COURSE_REDIS_SERVER_ARGS", ""))
        if self.confine is not None:
            args = self.confine.wrap(args, self)
        return args

    def _prepare_dirs(self) -> None:
        """The data folder (owner-only) and the socket's folder (others may use the socket by name)."""
        sock_dir = self.socket_path.parent
        sock_dir.mkdir(parents=True, exist_ok=True)
        if self.socket_path.exists():
            self.socket_path.unlink()
        uid = getattr(self.confine, "uid", None)
        if uid is not None:
            gid = uid
            for d in (Path(self.data_dir), sock_dir):
                os.chown(d, uid, gid)
            for name in ("users.conf", "nodes.conf", "redis.log"):
                if (Path(self.data_dir) / name).exists():
                    os.chown(Path(self.data_dir) / name, uid, gid)
        os.chmod(self.data_dir, 0o711 if self.unix_socket else 0o700)
        os.chmod(sock_dir, 0o711)

    def start(self, timeout: float = 10.0) -> "PrivateRedis":
        """Start (or restart on the same data directory) and wait until it answers PING."""
        if self.proc and self.proc.poll() is None:
            return self
        if not self.unix_socket and not self.port:
            self.port = free_port()
        command = self.command_line()
        self._prepare_dirs()
        self.proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        _running.add(self)
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(errors="replace")
                log = Path(self.data_dir) / "redis.log"
                tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
                raise CourseError(
                    msg(
                        "server_start_failed",
                        port=self.port,
                        detail=(err.strip() or " / ".join(tail) or _("exit code {code}", code=self.proc.returncode)),
                    )
                )
            try:
                if self.single_node_cluster:
                    self._assign_slots()
                connect(self.url, owned=True, prefix="", socket_timeout=1).ping()
                if self.users:
                    self._add_student()
                return self
            except AclRefused:
                raise
            except CourseError as exc:
                last = exc
                time.sleep(0.02)
        self.kill()
        raise CourseError(
            msg(
                "server_start_failed",
                port=self.port,
                detail=_("no answer in {seconds:.0f} s ({last})", seconds=timeout, last=last),
            )
        )

    def _add_student(self) -> None:
        """The ``student`` user, with the rules this server's command table allows (those it leaves
        out are logged and kept in :attr:`left_out_rules`).  A rule the server still refuses stops
        the start with one sentence that names it."""
        c = connect(self.url, owned=True, prefix="", socket_timeout=5)
        try:
            version = str(c.info("server").get("redis_version", ""))
            commands = server_commands(c)
            self.left_out_rules = left_out(version, commands)
            if self.left_out_rules:
                _log.info(
                    "Redis %s has no %s: the student user's rules leave them out",
                    version,
                    " ".join(self.left_out_rules),
                )
            rules = student_rules(version, commands)
            try:
                c.execute_command(
                    "ACL", "SETUSER", "student", "reset", "on", _acl_hash(self._secrets["student"]), *rules
                )
            except Exception as exc:  # noqa: BLE001 - the server's own words name the rule
                self.kill()
                raise AclRefused(
                    msg(
                        "server_start_failed",
                        port=self.port,
                        detail=_(
                            "Redis {version} refuses the grading user's ACL rules ({error})", version=version, error=exc
                        ),
                    )
                ) from None
        finally:
            c.close()

    def _assign_slots(self) -> None:
        """Single-node cluster: give this node every slot (once; nodes.conf keeps them across restarts).
        Raises CourseError until the node answers; it serves commands when cluster_state is ok."""
        c = connect(self.url, owned=True, prefix="", socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            info = c.cluster("info")
            if int(info.get("cluster_slots_assigned", 0)) == 0:
                c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            if info.get("cluster_state") != "ok":
                raise CourseError("cluster state not ok yet")
        except CourseError:
            raise
        except Exception as exc:  # noqa: BLE001 - not up yet: the start loop tries again
            raise CourseError(str(exc)) from None
        finally:
            c.close()

    def client(self, prefix: str | None = None, **kwargs):
        """A client for this server; it is owned, so server-wide commands are allowed."""
        return connect(self.url, owned=True, prefix=prefix, **kwargs)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop cleanly (SIGTERM: the server saves if its persistence says so)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        _running.discard(self)

    def kill(self) -> None:
        """Kill at once (SIGKILL), as a crash or a power cut would: nothing more is written."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        _running.discard(self)

    def close(self) -> None:
        """Stop and remove the data directory if the course made it."""
        self.stop()
        if self._own_dir and self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "PrivateRedis":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def private_redis(persistence: str = "none", **kwargs) -> Iterator[PrivateRedis]:
    """Start a private redis-server for the ``with`` block; it is stopped and its data removed after."""
    srv = PrivateRedis(persistence=persistence, **kwargs)
    try:
        yield srv.start()
    finally:
        srv.close()


@atexit.register
def _stop_all() -> None:
    for srv in list(_running):
        with contextlib.suppress(Exception):
            srv.kill()
            if srv._own_dir and srv.data_dir:
                shutil.rmtree(srv.data_dir, ignore_errors=True)
