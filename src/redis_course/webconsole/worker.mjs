// The Web Worker behind every console of a page: Pyodide, the wheels and the course's Python, loaded
// from this site (the folder this file is in) on the first click, then reused by every console.
// Messages in:  {op: "init", pyodide, wheels, packages, course}, {op: "run", id, sid, client, lines},
//               {op: "reset", id, sid}
// Messages out: {op: "progress", stage, ms}, {op: "ready", ms}, {op: "failed", detail},
//               {op: "result", id, results} ({prompt, command, lines, note} per line)
let py = null;
let session = null;
let starting = null;

async function start(msg) {
  const started = performance.now();
  const base = new URL("./", import.meta.url);
  const runtime = new URL(msg.pyodide, base).href;
  postMessage({op: "progress", stage: "runtime", ms: performance.now() - started});
  const {loadPyodide} = await import(new URL("pyodide.mjs", runtime).href);
  // packageBaseUrl: anything Pyodide would fetch by name comes from this site, never from its CDN
  py = await loadPyodide({indexURL: runtime, packageBaseUrl: runtime, stdout: () => {}, stderr: () => {}});
  postMessage({op: "progress", stage: "packages", ms: performance.now() - started});
  if (msg.packages) {  // fakeredis, redis, sortedcontainers precompiled to .pyc (see precompile.py)
    const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
    py.unpackArchive(await download(new URL(msg.packages, base)), "zip", {extractDir: site});
  } else {
    await py.loadPackage(msg.wheels.map((w) => new URL(w, base).href), {messageCallback: () => {}});
  }
  py.unpackArchive(await download(new URL(msg.course, base)), "zip", {extractDir: "/home/pyodide/course"});
  postMessage({op: "progress", stage: "import", ms: performance.now() - started});
  py.runPython("import importlib, sys; sys.path.insert(0, '/home/pyodide/course'); importlib.invalidate_caches()");
  session = py.pyimport("redis_course.webconsole.session");
  postMessage({op: "ready", ms: performance.now() - started});
}

async function download(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`${url.pathname}: HTTP ${resp.status}`);
  return resp.arrayBuffer();
}

function toJs(proxy) {
  const value = proxy.toJs({dict_converter: Object.fromEntries});
  proxy.destroy();
  return value;
}

onmessage = async (ev) => {
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
