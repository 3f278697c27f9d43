"""The site's CJK web font, cut for each language to the characters its pages show.

course.css declares ``Course CJK`` (``assets/fonts/course-cjk.woff``) for CJK characters only, after the
system fonts, for a machine without a Chinese font.  The charts' whole font (``charts.FONT_FILE``,
2.8 MB) would be downloaded by such a machine on every page, the English and Russian ones included
(the language menu says 简体中文).  Each language gets instead a subset holding the CJK characters
that occur in its own built pages and search index (the Chinese site: its text; the others: the
menu's four characters), as WOFF: fontTools' subsetter, O(glyphs kept).
"""
from __future__ import annotations

import re
from pathlib import Path

WEB_FONT = "course-cjk.woff"
# the unicode-range of the @font-face in course.css
CJK = re.compile(r"[\u2e80-\u2fff\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def cjk_characters(site_lang_dir: Path) -> set[str]:
    """The CJK characters in a built language site's pages and search index."""
    chars: set[str] = set()
    for path in list(site_lang_dir.rglob("*.html")) + list((site_lang_dir / "search").glob("*.json")):
        chars.update(CJK.findall(path.read_text(encoding="utf-8", errors="replace")))
    return chars


def write_web_font(source: Path, site_lang_dir: Path) -> Path:
    """Write ``assets/fonts/course-cjk.woff`` into a built language site: ``source`` cut to its characters."""
    from fontTools import subset

    out = site_lang_dir / "assets" / "fonts" / WEB_FONT
    out.parent.mkdir(parents=True, exist_ok=True)
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]  # keep the font's vertical forms and locl substitutions
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(cjk_characters(site_lang_dir))) or "\u4e2d")
    subsetter.subset(font)
    subset.save_font(font, str(out), options)
    return out
