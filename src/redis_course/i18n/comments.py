"""Comments in a page's code blocks, so that translations may translate them.

A code block is the same program in every language; only its comments are prose.  The parity check
(:mod:`redis_course.i18n.parity`) compares code blocks with their comments taken out (:func:`strip`), so a
Russian page may say ``# '2' (строка: значение хранится как строка)`` where the English page says
``# '2' (a str: the value is a string)``.

Python is read with the standard tokenizer (a ``#`` inside a string is not a comment; a Lua script in
a Python string keeps its ``--`` lines, since they are part of the string the program sends).  Other
languages are read line by line, minding quotes.  ``text`` blocks (redis-cli sessions and program
output) have no comments: everything in them is compared.
"""

from __future__ import annotations

import io
import textwrap
import tokenize

LINE_COMMENT = {
    "bash": "#",
    "sh": "#",
    "shell": "#",
    "console": "#",
    "python": "#",
    "py": "#",
    "yaml": "#",
    "toml": "#",
    "ini": "#",
    "conf": "#",
    "lua": "--",
    "sql": "--",
    "go": "//",
    "js": "//",
    "javascript": "//",
}


def language(info: str) -> str:
    """The language of a fence's info string: ``python title="x.py"`` → ``python``."""
    word = info.strip().split(" ", 1)[0].strip("{}.").lower()
    return word


def strip(info: str, body: str) -> str:
    """``body`` without its comments (and without the lines that held only a comment)."""
    lang = language(info)
    if lang in ("python", "py"):
        stripped = _strip_python(body)
        if stripped is not None:
            return stripped
    marker = LINE_COMMENT.get(lang)
    if not marker:
        return body
    lines = []
    for line in body.split("\n"):
        code = _cut(line, marker)
        if code.strip() or not line.strip():
            lines.append(code.rstrip())
    return "\n".join(lines)


def comments(info: str, body: str) -> list[str]:
    """The comments of a code block, in order (what a translator translates)."""
    lang = language(info)
    if lang in ("python", "py"):
        try:
            return [
                t.string
                for t in tokenize.generate_tokens(io.StringIO(textwrap.dedent(body)).readline)
                if t.type == tokenize.COMMENT
            ]
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
    marker = LINE_COMMENT.get(lang)
    if not marker:
        return []
    return [line[len(_cut(line, marker)) :].strip() for line in body.split("\n") if _cut(line, marker) != line]


def _strip_python(body: str) -> str | None:
    body = textwrap.dedent(body)  # a block inside a content tab is indented
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    lines = body.split("\n")
    cut: dict[int, int] = {}
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            cut[tok.start[0] - 1] = tok.start[1]
    out = []
    for i, line in enumerate(lines):
        if i in cut:
            code = line[: cut[i]].rstrip()
            if code.strip():
                out.append(code)
            continue
        out.append(line.rstrip())
    return "\n".join(out)


def _cut(line: str, marker: str) -> str:
    """The part of ``line`` before a comment ``marker`` that is not inside quotes."""
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif line.startswith(marker, i) and (marker != "#" or i == 0 or line[i - 1] in " \t;"):
            return line[:i]
        i += 1
    return line
