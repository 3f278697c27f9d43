// Compile the console's third-party Python (fakeredis, redis, sortedcontainers) to .pyc with the
// browser's own CPython (Pyodide under Node), so that the first click imports instead of compiling.
// Usage: node precompile.mjs RUNTIME_DIR OUT.zip WHEEL...   (run by redis_course/webconsole/precompile.py)
import {readFileSync, writeFileSync} from "node:fs";
import {pathToFileURL} from "node:url";

const [runtime, out, ...wheels] = process.argv.slice(2);
const {loadPyodide} = await import(pathToFileURL(`${runtime}/pyodide.mjs`).href);
const py = await loadPyodide({indexURL: `${runtime}/`, packageBaseUrl: `${runtime}/`, stdout: () => {}});
await py.loadPackage(wheels, {messageCallback: () => {}});
py.runPython(`
import importlib._bootstrap_external as ext, os, sysconfig, zipfile

site = sysconfig.get_paths()["purelib"]
with zipfile.ZipFile("/tmp/bundle.zip", "w", zipfile.ZIP_DEFLATED) as z:
    wanted = ("fakeredis", "redis", "sortedcontainers")
    for top in sorted(d for d in os.listdir(site) if d in wanted or (d.endswith(".dist-info") and d.split("-")[0] in wanted)):
        for dirpath, dirs, files in os.walk(os.path.join(site, top)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, site)
                if name.endswith(".py"):  # sourceless: the .pyc where the .py was (imports it directly)
                    with open(path, "rb") as f:
                        code = compile(f.read(), rel, "exec", dont_inherit=True)
                    rel, data = rel + "c", bytes(ext._code_to_timestamp_pyc(code, 0, 0))
                else:
                    with open(path, "rb") as f:
                        data = f.read()
                info = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
`);
writeFileSync(out, py.FS.readFile("/tmp/bundle.zip"));
