"""Comparing two executed notebooks of one lesson: fakeredis against the real server.

pytest-notebook checks each run against the stored notebook; this adds what it cannot: the cells
tagged ``backend-differs`` must really differ between the two backends (the lesson's claim), and
every other cell not tagged ``varies`` must print the same on both, once the run's key prefix is masked.
"""

from __future__ import annotations

import re

from redis_course.notebooks import DIFFERS_TAG, MASK_TAG

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def output_text(out: dict) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return _ANSI.sub("", out.get("text", ""))
    if kind in ("execute_result", "display_data"):
        data = out.get("data", {})
        if "image/png" in data:
            return "<image>"
        return _ANSI.sub("", str(data.get("text/plain", "")))
    if kind == "error":
        return f"{out.get('ename')}: {_ANSI.sub('', out.get('evalue', ''))}"
    return ""


def comparable(nb, prefix: str | None = None) -> list[dict]:
    """Per code cell: index, tags, source head and the normalised text of its outputs."""
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        text = "".join(output_text(o) for o in cell.get("outputs", []))
        if prefix:
            text = text.replace(prefix, "<prefix>")
        cells.append(
            {
                "index": i,
                "tags": list(cell.metadata.get("tags", [])),
                "source": cell.source.splitlines()[0] if cell.source else "",
                "output": text,
            }
        )
    return cells


def compare_backends(fake, real, prefix_fake: str, prefix_real: str) -> list[str]:
    """Differences between the two runs that the lesson does not declare; [] when they agree."""
    problems = []
    for a, b in zip(comparable(fake, prefix_fake), comparable(real, prefix_real)):
        if MASK_TAG in a["tags"]:
            continue
        same = a["output"] == b["output"]
        if DIFFERS_TAG in a["tags"]:
            if same:
                problems.append(
                    f"cell {a['index']} ({a['source']!r}) is tagged {DIFFERS_TAG} but both "
                    f"backends now print the same; update the lesson and remove the tag"
                )
        elif not same:
            problems.append(
                f"cell {a['index']} ({a['source']!r}) differs:\n  fakeredis: {a['output']!r}\n"
                f"  redis:     {b['output']!r}"
            )
    return problems
