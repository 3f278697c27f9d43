"""What the tests that start ``course grade`` in a subprocess share: its command, and finding every
process it started."""

from __future__ import annotations

import sys
from pathlib import Path


def grade_command(subs: Path, out: Path, *extra: str) -> list[str]:
    """``course grade SUBS --out OUT --lab 00 --workers 2 EXTRA...`` as a command line of this Python."""
    return [sys.executable, "-m", "redis_course.cli", "grade", str(subs), "--out", str(out), "--lab", "00",
            "--workers", "2", *extra]  # fmt: skip


def marked(marker: str) -> set[int]:
    """Processes that carry ``COURSE_TEST_MARK=<marker>`` in their environment: everything a grading
    started with that mark (the grader, its boxes, their servers), wherever it was reparented."""
    needle = f"COURSE_TEST_MARK={marker}".encode()
    found = set()
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in env.read_bytes().split(b"\0"):
                found.add(int(env.parent.name))
        except OSError:
            continue
    return found
