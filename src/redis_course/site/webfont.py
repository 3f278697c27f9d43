"""The site's CJK web font, cut for each language to the characters its pages show.

course.css declares ``Course CJK`` (``assets/fonts/course-cjk.woff``) for CJK characters only, after the
system fonts, for a machine without a Chinese font.  The charts' whole font (``charts.FONT_FILE``,
2.8 MB) would be downloaded by such a machine on every page, the English and Russian ones included
(the language menu says 简体中文).  Each language gets instead a subset holding the CJK characters
that occur in its own built pages and search index (the Chinese site: its text; the others: the
menu's four characters), as WOFF: fontTools' subsetter, O(glyphs kept).

That font is still 300 KB for the Chinese site, and a page that preloads it spends the first seconds
of a slow connection on glyphs it does not show.  So each page also gets its own cut
(:func:`write_page_fonts`): ``assets/fonts/cjk-<hash>.woff`` with the characters of that page only
(pages with the same characters share one file), declared in the page's ``<head>`` as ``Course CJK``
with a ``unicode-range`` of exactly those characters.  A face declared later is tried first for the
characters it covers, so the page's text comes from the page's cut; a character it lacks (a search
result from another page) comes from the language's whole font, which is downloaded only then.
Chinese pages preload their cut (lesson 04: 180 KB instead of 300); on the others it holds the
language menu's 简体中文 (3 KB instead of 45).  A page's characters include those its scripts show
(Material's interface strings, JSON-escaped in the page).
"""

from __future__ import annotations

import hashlib
import re
from html import unescape
from pathlib import Path

WEB_FONT = "course-cjk.woff"
# the unicode-range of the @font-face in course.css
CJK = re.compile(r"[\u2e80-\u2fff\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def cjk_characters(site_lang_dir: Path) -> set[str]:
    """The CJK characters in a built language site's pages and search index."""
    chars: set[str] = set()
    for path in list(site_lang_dir.rglob("*.html")) + list((site_lang_dir / "search").glob("*.json")):
        chars.update(page_characters(path.read_text(encoding="utf-8", errors="replace")))
    return chars


def write_web_font(source: Path, site_lang_dir: Path) -> Path:
    """Write ``assets/fonts/course-cjk.woff`` into a built language site: ``source`` cut to its characters."""
    out = site_lang_dir / "assets" / "fonts" / WEB_FONT
    return write_subset(source, out, cjk_characters(site_lang_dir))


def write_subset(source: Path, out: Path, chars: set[str]) -> Path:
    """Write ``source`` cut to ``chars`` as WOFF to ``out``."""
    from fontTools import subset

    out.parent.mkdir(parents=True, exist_ok=True)
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]  # keep the font's vertical forms and locl substitutions
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(chars)) or "\u4e2d")
    subsetter.subset(font)
    subset.save_font(font, str(out), options)
    return out


PAGE_FONT = re.compile(r"cjk-[0-9a-f]{12}\.woff$")
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]*)assets/stylesheets/course\.css">')


def unicode_range(chars: set[str]) -> str:
    """``chars`` as a CSS ``unicode-range``: runs of consecutive code points as ranges, O(n log n)."""
    points = sorted(ord(c) for c in chars)
    runs: list[list[int]] = []
    for p in points:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return ",".join(f"U+{a:X}" if a == b else f"U+{a:X}-{b:X}" for a, b in runs)


def page_characters(html: str) -> set[str]:
    """The CJK characters a page can show: its text, entities and JSON-escaped strings decoded."""
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), html)
    return set(CJK.findall(unescape(text)))


def page_font_head(href: str, chars: set[str], preload: bool) -> tuple[str, str]:
    """What a page's ``<head>`` gets: the preload (placed before the stylesheets, so that it starts with
    them) and the ``@font-face`` (placed last, after course.css: the later face is tried first)."""
    face = (
        f'<style>@font-face{{font-family:"Course CJK";src:url("{href}") format("woff");font-display:swap;'
        f"unicode-range:{unicode_range(chars)}}}</style>"
    )
    link = f'<link rel="preload" href="{href}" as="font" type="font/woff" crossorigin>' if preload else ""
    return link, face


def write_page_fonts(source: Path, site_lang_dir: Path, preload: bool) -> dict[Path, Path]:
    """Give each built page of a language site its own cut of ``source`` (see the module's docstring);
    ``preload``: the pages ask for it at once.  Returns page → font.  O(pages + glyphs of each distinct cut)."""
    fonts_dir = site_lang_dir / "assets" / "fonts"
    for old in fonts_dir.glob("cjk-*.woff"):
        if PAGE_FONT.search(old.name):
            old.unlink()
    cuts: dict[str, Path] = {}
    written: dict[Path, Path] = {}
    for page in sorted(site_lang_dir.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        sheet = _STYLESHEET.search(html)
        chars = page_characters(html)
        if not sheet or not chars or "</head>" not in html:
            continue
        key = "".join(sorted(chars))
        font = cuts.get(key)
        if font is None:
            name = "cjk-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12] + ".woff"
            font = cuts[key] = write_subset(source, fonts_dir / name, chars)
        link, face = page_font_head(sheet.group(1) + "assets/fonts/" + font.name, chars, preload)
        if link:
            html = html[: sheet.start()] + link + "\n" + html[sheet.start() :]
        html = html.replace("</head>", face + "\n</head>", 1)
        page.write_text(html, encoding="utf-8")
        written[page] = font
    return written
