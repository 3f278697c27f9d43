// The Web Worker behind every console of a page: Pyodide, the wheels and the course's Python, loaded
// from this site (the folder this file is in) on the first click, then reused by every console.
// With a snapshot (snapshot.mjs made it at build time) Python's memory is restored as it was once
// fakeredis and the console's session were imported; without one, or when it cannot be restored,
// Python starts and imports them here, as it always did: the same answers, a slower start.
// Messages in:  {op: "init", pyodide, wheels, packages, course, snapshot}, {op: "run", id, sid, client, lines},
//               {op: "reset", id, sid}
// Messages out: {op: "progress", stage, ms, loaded?}, {op: "ready", ms, path, transferred, fallback?},
//               {op: "failed", detail}, {op: "result", id, results} ({prompt, command, lines, note} per line)
let py = null;
let session = null;
let starting = null;

async function start(msg) {
  const started = performance.now();
  const progress = (stage, extra) => postMessage({op: "progress", stage, ms: performance.now() - started, ...extra});
  const base = new URL("./", import.meta.url);
  const runtime = new URL(msg.pyodide, base).href;
  // packageBaseUrl: anything Pyodide would fetch by name comes from this site, never from its CDN
  const options = {indexURL: runtime, packageBaseUrl: runtime, stdout: () => {}, stderr: () => {}};
  progress("runtime");
  let fallback = null;
  if (msg.snapshot) {
    try {
      const loaded = msg.snapshot.map(() => 0);  // its parts, downloaded side by side
      const parts = msg.snapshot.map((name, k) => download(new URL(name, base), (n) => {
        loaded[k] = n;
        progress("runtime", {loaded: loaded.reduce((a, b) => a + b, 0)});
      }));
      const data = Promise.all(parts).then((chunks) => gunzipped(joined(chunks))).then((d) => {
        progress("snapshot");
        return d;
      });
      data.catch(() => {});  // a failed part is seen by loadPyodide below, which awaits it: no unhandled rejection
      const [{loadPyodide}, asm] = await Promise.all([
        import(new URL("pyodide.mjs", runtime).href), import(new URL("pyodide.asm.mjs", runtime).href)]);
      // Pyodide fetches the WebAssembly and the standard library while the snapshot is still arriving
      py = await loadPyodide({...options, ...restoreOptions(asm.default, data)});
      py.runPython("import random; random.seed()");  // not the sequence every restored snapshot would share
      session = py.pyimport("redis_course.webconsole.session");
      postMessage({op: "ready", ms: performance.now() - started, path: "snapshot", transferred: transferred()});
      return;
    } catch (err) {  // a broken or missing file, a browser that cannot restore it: start Python instead
      fallback = String(err && err.message || err).split("\n")[0];
      py = null;
      session = null;
    }
  }
  const {loadPyodide} = await import(new URL("pyodide.mjs", runtime).href);
  py = await loadPyodide(options);
  progress("packages");
  if (msg.packages) {  // fakeredis, redis, sortedcontainers precompiled to .pyc (see precompile.py)
    const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
    py.unpackArchive(await download(new URL(msg.packages, base)), "zip", {extractDir: site});
  } else {
    await py.loadPackage(msg.wheels.map((w) => new URL(w, base).href), {messageCallback: () => {}});
  }
  py.unpackArchive(await download(new URL(msg.course, base)), "zip", {extractDir: "/home/pyodide/course"});
  progress("import");
  py.runPython("import importlib, sys; sys.path.insert(0, '/home/pyodide/course'); importlib.invalidate_caches()");
  session = py.pyimport("redis_course.webconsole.session");
  postMessage({op: "ready", ms: performance.now() - started, path: msg.packages ? "packages" : "wheels",
               transferred: transferred(), fallback});
}

// The file's bytes; ``onBytes(loaded)`` is told as they arrive (at most every 256 KB).
async function download(url, onBytes) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`${url.pathname}: HTTP ${resp.status}`);
  if (!onBytes || !resp.body) return new Uint8Array(await resp.arrayBuffer());
  const chunks = [];
  let loaded = 0, told = 0;
  for (const reader = resp.body.getReader(); ;) {
    const {done, value} = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    if (loaded - told >= 262144) { told = loaded; onBytes(loaded); }
  }
  onBytes(loaded);
  return joined(chunks);
}

function joined(chunks) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.byteLength; }
  return out;
}

// The snapshot is stored gzip-compressed, cut into parts (assets.SNAPSHOT_PART); joined, they are one
// gzip stream.
async function gunzipped(data) {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// What crossed the network for this worker (Resource Timing: 0 for a file the browser had kept).
function transferred() {
  return performance.getEntriesByType("resource").reduce((sum, e) => sum + (e.transferSize || 0), 0);
}

// Also imported by snapshot.mjs, which checks at build time that a snapshot restored this way answers
// as a fresh start (a module worker ignores the export).  Pyodide 314.0.7 sets INITIAL_MEMORY to the
// snapshot's size, which its WebAssembly module ignores (it makes its own memory): grow the memory to
// the snapshot's heap first.
export function restoreOptions(createPyodideModule, snapshotPromise) {
  return {
    _loadSnapshot: snapshotPromise,
    createPyodideModule: async (settings) => {  // called once Pyodide has the snapshot
      const snapshot = await snapshotPromise;
      const heap = snapshot.byteLength - new Uint32Array(snapshot.buffer, snapshot.byteOffset, 2)[1];
      const module = await createPyodideModule(settings);
      const brk = module._sbrk(0);
      if (module.HEAP8.length < heap) module._sbrk(heap - brk);
      if (module.HEAP8.length < heap) throw new Error(`memory ${module.HEAP8.length} < snapshot ${heap}`);
      return module;
    },
  };
}

function toJs(proxy) {
  const value = proxy.toJs({dict_converter: Object.fromEntries});
  proxy.destroy();
  return value;
}

// globalThis: the worker's own scope; under Node (snapshot.mjs imports this file) a plain property
globalThis.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.op === "init") {
    if (!starting) {
      starting = start(msg).catch((err) => {
        postMessage({op: "failed", detail: String(err && err.message || err).split("\n").slice(-2).join(" ")});
      });
    }
    return;
  }
  await starting;
  if (!session) return;
  try {
    if (msg.op === "reset") {
      session.reset_session(msg.sid);
      postMessage({op: "result", id: msg.id, results: []});
    } else if (msg.op === "run") {
      const results = toJs(session.run_lines(msg.sid, msg.client, msg.lines));
      postMessage({op: "result", id: msg.id, results});
    }
  } catch (err) {
    postMessage({op: "result", id: msg.id, results: [], error: String(err && err.message || err)});
  }
};
