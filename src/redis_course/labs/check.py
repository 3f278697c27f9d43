"""``course check [LAB] [--lang ru|en|zh]``: the student runs the public tests of one or all labs.

Each lab runs in the same isolated runner as grading, on a private Redis (redis-server when it is
installed, else a fakeredis server), or on the server in ``REDIS_URL`` under a fresh key prefix.
The table shows every test's points and, for each failure, what happened and the lab's hint in
the student's language.
"""
from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from .model import Lab, discover, find_lab
from .runner import LabResult, run_lab
from .sandbox import ForkServer, Limits
from .texts import t

MARK = {"passed": "✓", "skipped": "–"}


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, n: int) -> str:
    return text + " " * max(0, n - width(text))


def fmt_points(x: float) -> str:
    return f"{x:g}"


def render_table(results: list[tuple[Lab, LabResult]], lang: str = "en") -> str:
    """The check table: lab, test, points earned / possible, result; failures with message and hint."""
    rows: list[tuple[str, str, str, str, list[str]]] = []
    total = max_total = 0.0
    for lab, res in results:
        total += res.points
        max_total += res.max_points
        if res.status in ("missing", "grader-error") or not res.tests:
            rows.append((lab.id, "—", "0/0", t(res.status if res.status != "ok" else "skipped", lang),
                         [res.message.strip().splitlines()[0]] if res.message.strip() else []))
            continue
        first = True
        for test in res.tests:
            outcome = test.event if (test.event and not test.passed) else test.outcome
            mark = MARK.get(test.outcome, "✗")
            notes = []
            if not test.passed and test.outcome != "skipped":
                if test.message:
                    notes.append(test.message.strip().splitlines()[0][:300])
                hint = lab.hint(test.hint, lang)
                if hint:
                    notes.append(f"{t('hint', lang)}: {hint}")
            pts = f"{fmt_points(test.points)}/{fmt_points(test.max_points)}" if test.counted else "–"
            rows.append((lab.id if first else "", test.title, pts, f"{mark} {t(outcome, lang)}", notes))
            first = False
    head = (t("lab", lang), t("test", lang), t("points", lang), t("result", lang))
    w = [max([width(head[i])] + [width(r[i]) for r in rows]) for i in range(4)]
    line = lambda cells: "  ".join(pad(c, w[i]) for i, c in enumerate(cells)).rstrip()  # noqa: E731
    out = [line(head), line(["-" * x for x in w])]
    indent = " " * (w[0] + 2)
    for r in rows:
        out.append(line(r[:4]))
        out.extend(f"{indent}  {note}" for note in r[4])
    out.append(line(["-" * x for x in w]))
    out.append(line([t("total", lang), "", f"{fmt_points(total)}/{fmt_points(max_total)}", ""]))
    return "\n".join(out)


def run_check(lab_spec: str | None = None, *, lang: str = "en", backend: str = "auto",
              source: Path | None = None, root: Path | None = None, limits: Limits | None = None,
              url: str | None = None) -> tuple[list[tuple[Lab, LabResult]], str]:
    labs = [find_lab(lab_spec, root)] if lab_spec else discover(root)
    if url is None:
        url = os.environ.get("REDIS_URL") or None
    results = []
    forkserver = ForkServer()  # one clean interpreter forks every lab's student processes
    try:
        for lab in labs:
            file = source if source is not None else lab.student_file
            lim = limits or Limits(call_timeout_s=lab.timeout_s)
            results.append((lab, run_lab(lab, file, visibility=("public",), backend=backend, url=url, limits=lim,
                                         forkserver=forkserver)))
    finally:
        forkserver.close()
    return results, render_table(results, lang)


def main(lab_spec: str | None, lang: str, backend: str = "auto", source: Path | None = None) -> int:
    results, table = run_check(lab_spec, lang=lang, backend=backend, source=source)
    import os

    from ..backend import _describe_url

    def shown(name: str) -> str:  # "url" means the server in REDIS_URL, under a fresh key prefix
        url = os.environ.get("REDIS_URL")
        return f"REDIS_URL ({_describe_url(url)})" if name == "url" and url else name

    backends = sorted({shown(r.backend) for _, r in results if r.backend})
    print(table)
    if backends:
        print(f"\n{t('backend', lang)}: {', '.join(backends)}")
    ok = all(r.status == "ok" and r.points == r.max_points for _, r in results)
    print(t("all_passed" if ok else "some_failed", lang))
    return 0 if ok else 1
