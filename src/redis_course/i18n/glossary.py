"""The glossary (``docs/<lang>/glossary.md``) and the Chinese search dictionary made from it.

Each glossary page is a table whose first column holds the term in the page's language, in bold:
``| **令牌桶** | token bucket | корзина токенов | … |``.  The second column of the Russian and Chinese
pages is the English term, which ties the rows of the three pages together.

Material's search segments Chinese with jieba when it builds the index.  jieba's general dictionary
cuts 令牌桶 into 令牌 / 桶 and 滑动窗口 into 滑动 / 窗口, so a search for the term highlights half of it
and ranks pages by the parts.  :func:`write_jieba_dictionary` writes every Chinese term of the glossary
as a jieba user dictionary, which the zh site's search loads (``jieba_dict_user``).
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths

_ROW = re.compile(r"^\|\s*\*\*(?P<term>[^*|]+)\*\*\s*\|\s*(?P<second>[^|]+?)\s*\|", re.MULTILINE)
_HAN = re.compile(r"[\u3400-\u9fff]")
FREQUENCY = 200_000  # higher than any word of jieba's own dictionary that could split a term


def page(lang: str) -> Path:
    return paths.DOCS / lang / "glossary.md"


def rows(lang: str) -> list[tuple[str, str]]:
    """(term in ``lang``, second column) for every row of the glossary page."""
    path = page(lang)
    if not path.exists():
        return []
    return [(m.group("term").strip(), m.group("second").strip()) for m in _ROW.finditer(path.read_text("utf-8"))]


def chinese_terms() -> list[str]:
    """The Chinese terms, and the Chinese words inside those that mix scripts (``Lua 脚本`` → ``脚本``)."""
    words: list[str] = []
    for term, _english in rows("zh"):
        for word in re.split(r"[\s/（）()、]+", term):
            if _HAN.search(word) and word not in words:
                words.append(word)
    return words


def write_jieba_dictionary(path: Path) -> Path:
    """A jieba user dictionary (``word frequency tag`` per line) of the glossary's Chinese terms."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{word} {FREQUENCY} n\n" for word in chinese_terms()), encoding="utf-8")
    return path
