"""The browser console: time from a click on Run to the first answer, with the precompiled packages
(``packages-*.zip``, what builds ship when Node is at hand) against the baseline of the three wheels
(what builds ship without Node, Python compiling every module in the browser).

    .venv/bin/python bench/console_first_answer.py            # site/ from `python3 run.py build`
    .venv/bin/python bench/console_first_answer.py --site DIR --rounds 5

Each round opens the lesson 02 page in a fresh Chromium context (empty HTTP cache), clicks the first
Run button and waits for the transcript's replies (and, as "next page", opens lesson 01 after it in
the same context, its HTTP cache warm, and waits for the first reply there); the worker's stages (runtime loaded, packages
loaded, imports done) come from the page.  A copy of the site is served from a temporary folder,
with the wheels from the cache beside the bundle.  Prints medians and the ratio; asserts nothing.
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

from redis_course import paths, site  # noqa: E402
from redis_course.webconsole import assets  # noqa: E402

PAGE = "en/02-atomicity/index.html"
SETTINGS = re.compile(r'(<script id="redis-console-settings" type="application/json">)(.*?)(</script>)', re.S)


def variant_page(root: Path, name: str, wheels: bool) -> str:
    """A copy of the lesson page whose console loads the wheels (``wheels``) or the bundle; its URL path."""
    html = (root / PAGE).read_text(encoding="utf-8")
    m = SETTINGS.search(html)
    cfg = json.loads(m.group(2))
    if wheels:
        cfg["packages"], cfg["wheels"] = None, [f"wheels/{a.name}" for a in assets.WHEELS]
    elif not cfg.get("packages"):
        raise SystemExit("this site ships the wheels only (built without Node): nothing to compare")
    html = html[:m.start(2)] + json.dumps(cfg, ensure_ascii=False) + html[m.end(2):]
    out = root / PAGE.replace("index.html", f"{name}.html")
    out.write_text(html, encoding="utf-8")
    return "/" + out.relative_to(root).as_posix()


def _run_first_console(page, entries: int) -> tuple[float, dict]:
    """Click the page's first Run and wait for ``entries`` answers: seconds taken, the console's timings."""
    started = time.monotonic()
    page.locator("button.rc-run").first.click()
    page.wait_for_function(f"document.querySelectorAll('.rc-entry').length >= {entries}", timeout=600_000)
    seconds = time.monotonic() - started
    return seconds, json.loads(page.get_attribute("html", "data-redis-console-timings") or "{}")


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
    ap.add_argument("--chromium", default=os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    if not (args.site / "console").is_dir():
        raise SystemExit(f"{args.site} has no console/: run `python3 run.py build` with network first")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="console-bench-") as tmp:
        root = Path(tmp) / "site"
        shutil.copytree(args.site, root)
        for wheel in assets.WHEELS:
            shutil.copyfile(assets.fetch(wheel), root / "console" / "wheels" / wheel.name)
        urls = {"wheels (baseline)": variant_page(root, "bench-wheels", True),
                "precompiled .pyc": variant_page(root, "bench-pyc", False)}
        server = site.make_server(port=0, directory=root)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        results: dict[str, list[tuple[float, dict]]] = {k: [] for k in urls}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium,
                                         args=["--headless", "--no-sandbox", "--disable-gpu"])
            results["precompiled, next page"] = []
            for _ in range(args.rounds):  # interleaved, so that a change in the machine's load hits all
                for name, path in urls.items():
                    results[name].append(first_answer(browser, base + path))
                results["precompiled, next page"].append(
                    next_page_answer(browser, base + urls["precompiled .pyc"], base + "/en/01-incr/"))
            browser.close()
        server.shutdown()

    print(f"first answer after a click on Run, median of {args.rounds} (load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} CPUs)")
    print(f"{'variant':<24} {'first answer s':>15} {'runtime s':>10} {'packages s':>11} {'imports s':>10}")
    medians = {}
    for name, rows in results.items():
        med = statistics.median(r[0] for r in rows)
        medians[name] = med

        def stage(a: str, b: str) -> float:
            return statistics.median((r[1].get(b, 0) - r[1].get(a, 0)) / 1000 for r in rows)

        print(f"{name:<24} {med:>15.1f} {stage('runtime', 'packages'):>10.1f} {stage('packages', 'import'):>11.1f} "
              f"{stage('import', 'ready'):>10.1f}")
    base_s, pyc_s = medians["wheels (baseline)"], medians["precompiled .pyc"]
    print(f"ratio precompiled / wheels: {pyc_s / base_s:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
