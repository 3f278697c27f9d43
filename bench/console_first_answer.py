"""The browser console: time from a click on Run to the first answer, restoring the memory snapshot
(``snapshot-*.gz``, what builds ship when Node is at hand) against starting Python and importing the
precompiled packages (``packages-*.zip``, the fallback, and what every page did before the snapshot),
and optionally the three wheels (what builds ship without Node: Python compiles every module).

    .venv/bin/python bench/console_first_answer.py            # site/ from `python3 run.py build`
    .venv/bin/python bench/console_first_answer.py --site DIR --rounds 5 --variants wheels,packages,snapshot

Each round opens the lesson 02 page in a fresh Chromium context (empty HTTP cache), clicks the first
Run button and waits for the transcript's replies ("cold"), and, in another fresh context, does the
same and then opens lesson 01 and waits for its first reply ("next page": the HTTP cache is warm, but
each page starts its own worker).  The page tells when the worker was ready, how Python started (its
path) and the bytes that crossed the network.  A copy of the site is served from a temporary folder,
with the wheels from the cache beside the bundle.  Prints medians; asserts nothing.
Numbers depend on the machine and its load: report them with both.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from redis_course import paths  # noqa: E402
from redis_course.site import build as site  # noqa: E402
from redis_course.webconsole import assets  # noqa: E402

PAGE = "en/02-atomicity/index.html"
NEXT = "en/01-incr/index.html"
SETTINGS = re.compile(r'(<script id="redis-console-settings" type="application/json">)(.*?)(</script>)', re.S)
# how each variant's console starts: the worker's path, and what its page's settings say
VARIANTS = {
    "wheels": "the three wheels, compiled in the browser (built without Node)",
    "packages": "the precompiled .pyc, imported in the browser (before the snapshot)",
    "snapshot": "the memory snapshot, restored",
}


def variant_page(root: Path, page: str, name: str, mode: str) -> str:
    """A copy of ``page`` whose console starts as ``mode`` says (VARIANTS); its URL path."""
    html = (root / page).read_text(encoding="utf-8")
    m = SETTINGS.search(html)
    cfg = json.loads(m.group(2))
    if mode == "wheels":
        cfg["packages"], cfg["wheels"] = None, [f"wheels/{a.name}" for a in assets.WHEELS]
    elif not cfg.get("packages"):
        raise SystemExit("this site ships the wheels only (built without Node): nothing to compare")
    if mode != "snapshot":
        cfg["snapshot"] = None
    elif not cfg.get("snapshot"):
        raise SystemExit("this site has no snapshot (built without Node, or it failed its check)")
    html = html[: m.start(2)] + json.dumps(cfg, ensure_ascii=False) + html[m.end(2) :]
    out = root / page.replace("index.html", f"{name}.html")
    out.write_text(html, encoding="utf-8")
    return "/" + out.relative_to(root).as_posix()


def _run_first_console(page, entries: int) -> tuple[float, dict]:
    """Click the page's first Run and wait for ``entries`` answers: seconds taken, the console's timings."""
    started = time.monotonic()
    page.locator("button.rc-run").first.click()
    page.wait_for_function(f"document.querySelectorAll('.rc-entry').length >= {entries}", timeout=600_000)
    seconds = time.monotonic() - started
    timings = json.loads(page.get_attribute("html", "data-redis-console-timings") or "{}")
    timings["path"] = page.get_attribute("html", "data-redis-console-path")
    timings["transferred"] = int(page.get_attribute("html", "data-redis-console-transferred") or -1)
    return seconds, timings


def first_answer(browser, url: str) -> tuple[float, dict]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        return _run_first_console(page, 4)
    finally:
        context.close()


def next_page_answer(browser, first: str, second: str) -> tuple[float, dict]:
    """A click on Run on ``second`` after one on ``first`` in the same context: the browser's HTTP cache
    holds the runtime (nothing is downloaded again), but each page starts its own worker."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(first)
        _run_first_console(page, 4)
        page.goto(second)
        return _run_first_console(page, 1)
    finally:
        context.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, default=paths.SITE)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--variants",
        default="packages,snapshot",
        help="comma-separated, of: " + ", ".join(f"{k} ({v})" for k, v in VARIANTS.items()),
    )
    ap.add_argument("--chromium", default=os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    if not (args.site / "console").is_dir():
        raise SystemExit(f"{args.site} has no console/: run `python3 run.py build` with network first")
    from playwright.sync_api import sync_playwright

    load_before = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    with tempfile.TemporaryDirectory(prefix="console-bench-") as tmp:
        root = Path(tmp) / "site"
        shutil.copytree(args.site, root)
        for wheel in assets.WHEELS:
            shutil.copyfile(assets.fetch(wheel), root / "console" / "wheels" / wheel.name)
        urls = {
            v: (variant_page(root, PAGE, f"bench-{v}", v), variant_page(root, NEXT, f"bench-{v}", v)) for v in variants
        }
        server = site.make_server(port=0, directory=root)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        results: dict[str, list[tuple[float, dict]]] = {}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=args.chromium, args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            for _ in range(args.rounds):  # interleaved, so that a change in the machine's load hits all
                for v, (first, second) in urls.items():
                    results.setdefault(f"{v}, cold", []).append(first_answer(browser, base + first))
                    results.setdefault(f"{v}, next page", []).append(
                        next_page_answer(browser, base + first, base + second)
                    )
            browser.close()
        server.shutdown()

    load_after = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    print(
        f"first answer after a click on Run, median of {args.rounds}; {os.cpu_count()} CPUs, "
        f"/proc/loadavg before {' '.join(load_before)}, after {' '.join(load_after)}"
    )
    print(f"{'variant':<22} {'first answer s':>15} {'worker ready s':>15} {'downloaded MB':>14}  path")
    for name, rows in results.items():
        med = statistics.median(r[0] for r in rows)
        ready = statistics.median(r[1].get("ready", 0) / 1000 for r in rows)
        down = statistics.median(r[1]["transferred"] / 1e6 for r in rows)
        paths_seen = sorted({str(r[1]["path"]) for r in rows})
        print(f"{name:<22} {med:>15.1f} {ready:>15.1f} {down:>14.1f}  {','.join(paths_seen)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
