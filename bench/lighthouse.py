#!/usr/bin/env python3
"""The site's Lighthouse scores: performance, accessibility, best practices and SEO, mobile preset.

    .venv/bin/python bench/lighthouse.py [--site site] [--langs en,ru,zh] [--lesson 04-rate-limiting]
                                         [--repeat 3] [--save now.json] [--baseline before.json]

Serves the built site (``python3 run.py build`` first) with the server of ``course serve`` on a free
port and runs npm ``lighthouse@12.8.2`` (installed once into ``~/.cache/redis-course/npm/``; 13.x
needs Node 22) with ``CHROME_PATH`` (default ``/usr/bin/chromium``) against the home page, a lesson
and a notebook page of each language.  Lighthouse's mobile preset simulates a slow 4G network and a
4x slower CPU, so the scores say more about the pages than about this machine; they still vary by a
few points between runs on a busy machine.

Prints one row per page: the four scores, the bytes transferred, the largest contentful paint, the
total blocking time, and two things to read them by, measured in the same minutes: the performance
score of a plain-HTML baseline (the same article, no theme and no script, "Plain") and the machine's
load average.
``--baseline`` (a file written by ``--save`` on an earlier build) adds the baseline's performance
score and the ratio of transferred bytes, now / baseline.  Targets: accessibility, best practices and
SEO 100; performance at least 90 on home and lesson pages, 80 on notebook pages.
``--lesson`` picks the lesson (and its notebook) to measure; ``--repeat N`` measures each page and its
baseline N times and reports the run of median performance score (a busy machine moves scores by ten
points from one run to the next).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from redis_course.site import build as site  # noqa: E402
from redis_course.downloads import cache_dir  # noqa: E402

LIGHTHOUSE = "lighthouse@12.8.2"
PAGES = {"home": "", "lesson": "01-incr/", "notebook": "01-incr/notebook/"}
CATEGORIES = {"performance": "Perf", "accessibility": "A11y", "best-practices": "BP", "seo": "SEO"}
TARGET_PERF = {"home": 90, "lesson": 90, "notebook": 80}


def lighthouse_bin() -> Path:
    """The lighthouse CLI, installed with npm into the course's cache on first use."""
    prefix = cache_dir() / "npm" / LIGHTHOUSE.replace("@", "-")
    cli = prefix / "node_modules" / "lighthouse" / "cli" / "index.js"
    if not cli.is_file():
        npm = shutil.which("npm")
        if not npm:
            raise SystemExit("npm is not installed (apt-get install npm): Lighthouse runs on Node.js.")
        prefix.mkdir(parents=True, exist_ok=True)
        print(f"installing {LIGHTHOUSE} into {prefix} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), LIGHTHOUSE],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return cli


def run_lighthouse(cli: Path, url: str, chrome: str) -> dict:
    cmd = [
        "node",
        str(cli),
        url,
        "--output=json",
        "--output-path=stdout",
        "--quiet",
        "--only-categories=" + ",".join(CATEGORIES),
        "--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage",
    ]
    for attempt in (1, 2):  # on a busy machine Chromium's DevTools protocol sometimes times out: once more
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env={**os.environ, "CHROME_PATH": chrome}, timeout=900
        )
        if proc.returncode == 0:
            return json.loads(proc.stdout)
    raise SystemExit(f"lighthouse failed on {url}:\n{proc.stderr[-2000:]}")


def summary(report: dict) -> dict:
    cats = report["categories"]
    audits = report["audits"]
    failed = sorted(
        f"{cid}:{a['id']}"
        for cid, cat in cats.items()
        for ref in cat["auditRefs"]
        if ref["weight"]
        and (a := audits[ref["id"]])["score"] is not None
        and a["score"] < 0.9
        and a["scoreDisplayMode"] in ("binary", "numeric", "metricSavings")
    )
    return {
        **{cid: round((cats[cid]["score"] or 0) * 100) for cid in CATEGORIES},
        "bytes": audits["total-byte-weight"].get("numericValue", 0),
        "lcp_ms": audits["largest-contentful-paint"].get("numericValue", 0),
        "tbt_ms": audits["total-blocking-time"].get("numericValue", 0),
        "cls": audits["cumulative-layout-shift"].get("numericValue", 0),
        "failed": failed,
    }


_ARTICLE = re.compile(r"<article\b[^>]*>(.*?)</article>", re.S)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
PLAIN = "index.plain.html"


def write_plain_page(page: Path) -> Path:
    """The baseline: the same article as a plain HTML page beside it (same images, no theme, no script),
    what the page would score with nothing but its content."""
    html = page.read_text(encoding="utf-8")
    article = _ARTICLE.search(html)
    if not article:
        raise SystemExit(f"{page}: no <article> to take the baseline from")
    lang = re.search(r'<html lang="([^"]+)"', html).group(1)
    title = _TITLE.search(html).group(1)
    out = page.with_name(PLAIN)
    out.write_text(
        f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>{title}</title>
<meta name="description" content="{title}">
<style>body{{max-width:40rem;margin:0 auto;padding:0 1rem;font-family:sans-serif;line-height:1.5}}
pre{{overflow:auto}}img{{max-width:100%;height:auto}}</style></head>
<body><main>{article.group(1)}</main></body></html>""",
        encoding="utf-8",
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site", help="the built site (default: site/)")
    ap.add_argument("--langs", default="en,ru,zh")
    ap.add_argument("--pages", default=",".join(PAGES))
    ap.add_argument("--lesson", default="01-incr", help="the lesson whose page and notebook are measured")
    ap.add_argument("--repeat", type=int, default=1, help="runs per page; the median run is reported")
    ap.add_argument("--chrome", default=os.environ.get("CHROME_PATH", "/usr/bin/chromium"))
    ap.add_argument("--save", type=Path, help="write the results as JSON (a later run's --baseline)")
    ap.add_argument("--baseline", type=Path, help="results saved by an earlier run, to compare with")
    ap.add_argument("--failed", action="store_true", help="also list the audits that cost points")
    ap.add_argument("--reports", type=Path, help="a folder for Lighthouse's full JSON reports")
    args = ap.parse_args()
    if not (args.site / "en" / "index.html").is_file():
        raise SystemExit(f"{args.site} holds no built site: run `python3 run.py build` first.")
    cli = lighthouse_bin()
    pages = {kind: url.replace("01-incr", args.lesson) for kind, url in PAGES.items()}
    server = site.make_server(port=0, directory=args.site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    baseline = json.loads(args.baseline.read_text()) if args.baseline else {}
    results = {}
    head = (
        f"{'page':<16}"
        + "".join(f"{h:>6}" for h in CATEGORIES.values())
        + f"{'KB':>8}{'LCP s':>7}{'TBT s':>7}{'CLS':>6}"
    )
    head += f"{'Plain':>7}{'load':>6}"
    if baseline:
        head += f"{'Perf0':>7}{'KB0':>8}{'KB/KB0':>8}"
    print(head, flush=True)
    try:
        for lang in args.langs.split(","):
            for kind in args.pages.split(","):
                key = f"{lang}/{kind}"
                load = os.getloadavg()[0]
                runs, plains = [], []
                for n in range(args.repeat):
                    plain = write_plain_page(args.site / lang / pages[kind] / "index.html")
                    plains.append(summary(run_lighthouse(cli, f"{base}/{lang}/{pages[kind]}{PLAIN}", args.chrome)))
                    plain.unlink()
                    report = run_lighthouse(cli, f"{base}/{lang}/{pages[kind]}", args.chrome)
                    if args.reports:
                        args.reports.mkdir(parents=True, exist_ok=True)
                        (args.reports / f"{lang}-{kind}-{n}.json").write_text(json.dumps(report), encoding="utf-8")
                    runs.append(summary(report))
                r = results[key] = sorted(runs, key=lambda x: x["performance"])[len(runs) // 2]
                r["runs"] = [x["performance"] for x in runs]
                r["plain"] = sorted(x["performance"] for x in plains)[len(plains) // 2]
                r["load"] = round((load + os.getloadavg()[0]) / 2, 1)
                row = (
                    f"{key:<16}"
                    + "".join(f"{r[c]:>6}" for c in CATEGORIES)
                    + f"{r['bytes'] / 1024:>8.0f}{r['lcp_ms'] / 1000:>7.1f}{r['tbt_ms'] / 1000:>7.1f}{r['cls']:>6.2f}"
                    + f"{r['plain']:>7}{r['load']:>6.1f}"
                )
                if key in baseline:
                    b = baseline[key]
                    row += f"{b['performance']:>7}{b['bytes'] / 1024:>8.0f}{r['bytes'] / b['bytes']:>8.2f}"
                if args.repeat > 1:
                    row += "  runs " + "/".join(map(str, r["runs"]))
                print(row, flush=True)
                if args.failed and r["failed"]:
                    print("    costs points: " + ", ".join(r["failed"]), flush=True)
    finally:
        server.shutdown()
        server.server_close()
    if args.save:
        args.save.write_text(json.dumps(results, indent=1), encoding="utf-8")
    missed = [
        k
        for k, r in results.items()
        if r["accessibility"] < 100
        or r["best-practices"] < 100
        or r["seo"] < 100
        or r["performance"] < TARGET_PERF[k.split("/")[1]]
    ]
    print(
        "targets (A11y, BP, SEO 100; Perf >= 90 home and lesson, >= 80 notebook): "
        + ("met" if not missed else "missed on " + ", ".join(missed))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
