// The console's Python as it is once fakeredis, redis and the console's session module are imported:
// a Pyodide memory snapshot, made with the browser's own CPython (Pyodide under Node), gzip-compressed.
// A click then restores the memory instead of starting Python and importing some 200 modules.
// Usage: node snapshot.mjs RUNTIME_DIR PACKAGES.zip COURSE.zip OUT.gz
//        (run by redis_course/webconsole/precompile.py; exit status 0 only when OUT.gz is good)
//
// What a snapshot keeps is the WebAssembly memory: Python's objects, its imported modules and caches.
// It does not keep Pyodide's file system (the unpacked packages and course), so everything the console
// reads from a file is read here, before the snapshot: every fakeredis module is imported, its command
// table loaded and a session run through the commands below.  Then the snapshot is restored in a second
// Pyodide, exactly as worker.mjs restores it, and the same commands must print the same replies, or
// nothing is written (the site then ships without a snapshot and the console starts Python as before).
// What else a snapshot freezes: the seed of `random` (the worker reseeds it after a restore) and the
// seed of str hashes, so the order in which a set's members are printed is the same on every page
// (one of the orders a fresh start could print; the transcripts' checks do not depend on it).
import {readFileSync, writeFileSync} from "node:fs";
import {pathToFileURL} from "node:url";
import {gunzipSync, gzipSync} from "node:zlib";

import {restoreOptions} from "./worker.mjs";  // restored here exactly as the browser restores it

const [runtime, packages, course, out] = process.argv.slice(2);
const asm = await import(pathToFileURL(`${runtime}/pyodide.asm.mjs`).href);
const {loadPyodide} = await import(pathToFileURL(`${runtime}/pyodide.mjs`).href);
const options = {indexURL: `${runtime}/`, packageBaseUrl: `${runtime}/`, stdout: () => {}, stderr: () => {}};

// replies that do not depend on the clock or on chance, across the command families the lessons use
const CHECK = [
  "SET visits 10", "INCR visits", "INCRBY visits 5", "DECR visits", "GET visits", "APPEND s ab", "STRLEN s",
  "MSET a 1 b 2", "MGET a b missing", "SETNX a 3", "GETSET a 4", "SET t v NX", "DEL t", "EXISTS a t",
  "TYPE a", "EXPIRE a 100", "PERSIST a", "SETRANGE s 1 zz", "GETRANGE s 0 -1", "SETBIT bits 7 1",
  "BITCOUNT bits", "HSET h f 1 g 2", "HINCRBY h f 3", "HGETALL h", "LPUSH l x y z", "LRANGE l 0 -1",
  "RPOP l", "SADD set m", "SCARD set", "SISMEMBER set m", "ZADD z 1 a 2 b", "ZINCRBY z 5 a",
  "ZRANGE z 0 -1 WITHSCORES", "ZREMRANGEBYSCORE z 0 1", "PFADD hll a b c", "PFCOUNT hll",
  "XADD st 1-1 f v", "XRANGE st - +", "XLEN st", "GEOADD g 13.36 38.11 p", "GEOPOS g p",
  "MULTI", "INCR visits", "INCR nope nope", "EXEC", "WATCH visits", "UNWATCH", "MULTI", "DISCARD",
  "INCR s", "SET x 1 PX", "KEYS *", "DBSIZE", "SCAN 0 MATCH zz", "SORT l ALPHA", "OBJECT ENCODING a",
  "INFO", "EVAL \"return 1\" 0", "BLPOP l 0", "SUBSCRIBE c", "CONFIG GET maxmemory", "NOSUCH a b",
  "SET \"open", "CLIENT SETNAME me", "CLIENT GETNAME", "ECHO hi", "PING", "TS.ADD ts 1 1", "JSON.SET j $ 1",
  "BF.ADD bf x", "FLUSHDB", "DBSIZE",
];
const RUN = `
import json
from redis_course.webconsole import session
out = []
for client in (0, 1):
    session.reset_session(-1)
    out.append(session.run_lines(-1, client, json.loads(CHECK)))
session._sessions.clear()
json.dumps(out)
`;

function replies(py) {
  py.globals.set("CHECK", JSON.stringify(CHECK));
  const result = py.runPython(RUN);
  py.globals.delete("CHECK");
  return result;
}

async function main() {
  // -- make: start Python, import and warm up everything, take the snapshot
  const maker = await loadPyodide({...options, _makeSnapshot: true});
  const site = maker.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  maker.unpackArchive(new Uint8Array(readFileSync(packages)), "zip", {extractDir: site});
  maker.unpackArchive(new Uint8Array(readFileSync(course)), "zip", {extractDir: "/home/pyodide/course"});
  maker.runPython(`
import importlib, pkgutil, sys
sys.path.insert(0, "/home/pyodide/course")
importlib.invalidate_caches()
import fakeredis
# every module fakeredis has, but the servers and clients for other libraries the console does not use
for mod in pkgutil.walk_packages(fakeredis.__path__, "fakeredis."):
    if any(part in mod.name for part in ("_tcp_server", "aioredis", "_valkey", "_async")):
        continue
    try:
        importlib.import_module(mod.name)
    except Exception:  # an optional dependency that is not there (lupa, numpy, probables, jsonpath_ng)
        pass
from fakeredis.model import _command_info
_command_info._load_command_info()  # commands.json, read on the first command that needs it
import redis_course.webconsole.session
  `);
  const expected = replies(maker);
  maker.runPython("import gc; gc.collect()");
  const packed = gzipSync(maker.makeMemorySnapshot(), {level: 9});

  // -- check: restore it in a fresh Pyodide, as the browser does, and compare the replies
  const restored = await loadPyodide({...options, ...restoreOptions(asm.default, Promise.resolve(gunzipSync(packed)))});
  restored.runPython("import random; random.seed()");
  const got = replies(restored);
  if (got !== expected) {
    const [a, b] = [JSON.parse(got).flat(), JSON.parse(expected).flat()];
    const i = a.findIndex((r, k) => JSON.stringify(r) !== JSON.stringify(b[k]));
    console.error(`a restored snapshot answers ${JSON.stringify(a[i]?.lines)} to ${b[i]?.command}, ` +
                  `a fresh start ${JSON.stringify(b[i]?.lines)}`);
    process.exit(1);
  }
  writeFileSync(out, packed);
}

try {
  await main();
} catch (err) {  // one line for the build's log, not the minified source Node would print
  console.error(String(err && err.message || err).split("\n").filter(Boolean).slice(-1)[0]);
  process.exit(2);
}
