"""Plain-text tables that stay aligned in every language (a Chinese character takes two columns).

    print_table([_("N"), _("expected"), "INCR"], [(1, 25, 25), (16, 400, 400)])

Columns whose cells are all numbers are right-aligned, the others left-aligned.
"""

from __future__ import annotations

import unicodedata


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal or a monospaced block: wide (Chinese) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, columns: int, right: bool = False) -> str:
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


def _number(text: str) -> bool:
    try:
        float(text.replace(",", "").replace("%", "").replace("\u202f", "").replace(" ", ""))
    except ValueError:
        return False
    return True


def table(headers: list[str], rows: list, gap: str = "  ") -> str:
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    n = len(headers)
    widths = [max(width(row[i]) for row in cells) for i in range(n)]
    numeric = [bool(rows) and all(_number(row[i]) for row in cells[1:]) for i in range(n)]
    return "\n".join(gap.join(pad(row[i], widths[i], numeric[i]) for i in range(n)).rstrip() for row in cells)


def print_table(headers: list[str], rows: list) -> None:
    print(table(headers, rows))
