"""Typography of the translated pages, checked by ``course i18n check``.

* Chinese: a paragraph is written on one line.  Markdown turns a line break into a space, and a
  space between two Chinese characters is visible.
* Russian: digit groups are separated by a no-break space (``10 000`` with U+00A0), so a number in a
  narrow table column never breaks into "10" and "000".
* Chinese: digit groups are separated by commas (``10,000``), never by spaces.

Code blocks, inline code, link targets and heading attributes are left out: there the text is code.
"""

from __future__ import annotations

import re

_FRONT = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})[^\n]*\n.*?^(?P=indent)(?P=ticks)[ \t]*$", re.MULTILINE | re.DOTALL
)
_CODE_LIKE = [re.compile(r"`[^`\n]*`"), re.compile(r"\]\([^)\n]*\)"), re.compile(r"\{[^}\n]*#[^}\n]*\}")]
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+\.\s|#|\||>|!!!|\?\?\?|===|<|\{|```|~~~|$)")
_LINE_BLOCK = re.compile(r"^\s*(?:#|\||!!!|\?\?\?|===|<|```|~~~)")  # a line that is a block by itself
_GROUPED = {
    "ru": re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?!\d)"),  # ordinary spaces between groups
    "zh": re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)"),
}


def prose(text: str) -> str:
    """``text`` with front matter, code and link targets blanked out (same length, same lines)."""
    blank = lambda m: re.sub(r"[^\n]", "\x00", m.group(0))  # noqa: E731
    text = _FRONT.sub(blank, text, count=1)
    text = _FENCE.sub(blank, text)
    for pattern in _CODE_LIKE:
        text = pattern.sub(blank, text)
    return text


def soft_breaks(text: str) -> list[int]:
    """Lines where a Chinese paragraph goes on after a line break."""
    lines = re.sub(r"\x00+", "x", prose(text)).split("\n")
    found: list[int] = []
    for i in range(1, len(lines)):
        prev, line = lines[i - 1].rstrip(), lines[i].strip()
        if (
            line
            and prev.strip()
            and not _BLOCK_START.match(lines[i])
            and not _LINE_BLOCK.match(prev)
            and not prev.endswith("  ")
            and (_CJK.match(prev[-1]) or _CJK.match(line[0]))
        ):
            found.append(i + 1)
    return found


def badly_grouped(text: str, lang: str) -> list[tuple[int, str]]:
    """(line, number) for numbers grouped the wrong way for ``lang``."""
    pattern = _GROUPED.get(lang)
    if pattern is None:
        return []
    masked = prose(text)
    return [(masked.count("\n", 0, m.start()) + 1, m.group(0)) for m in pattern.finditer(masked)]


def problems(text: str, lang: str) -> list[str]:
    out = []
    breaks = soft_breaks(text) if lang == "zh" else []
    if breaks:
        out.append(
            "line breaks inside Chinese paragraphs (each shows as a space; join the lines): lines "
            + ", ".join(map(str, breaks[:8]))
            + (" ..." if len(breaks) > 8 else "")
        )
    numbers = badly_grouped(text, lang)
    if numbers:
        how = "a no-break space (U+00A0)" if lang == "ru" else "commas (10,000)"
        out.append(
            f"digit groups must be separated by {how}: "
            + ", ".join(f"line {line}: {n!r}" for line, n in numbers[:6])
            + (" ..." if len(numbers) > 6 else "")
        )
    return out
