"""Rebuild NotoSansCJKsc-course.otf, the charts' font, from the full Noto Sans CJK collection.

    sudo apt install fonts-noto-cjk          # or download Noto Sans CJK from its release page
    .venv/bin/python src/redis_course/fonts/make_subset.py /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc

Keeps Latin, Cyrillic, general punctuation, letterlike symbols (№), arrows, mathematical operators, CJK punctuation, full-width
forms, the 6,763 characters of GB 2312, and every non-ASCII character in the course's Chinese pages,
notebooks and catalogs.  The result (about 3 MB instead of 19 MB) is licensed like its source, under
the SIL Open Font License 1.1 (OFL.txt); no Reserved Font Name is used.  fontTools comes with
matplotlib, so nothing else is needed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = HERE / "NotoSansCJKsc-course.otf"
RANGES = [
    (0x20, 0x7F),
    (0xA0, 0x180),
    (0x400, 0x460),
    (0x2010, 0x2070),
    (0x2100, 0x2150),
    (0x2190, 0x21A0),
    (0x2200, 0x2270),
    (0x3000, 0x3020),
    (0xFF01, 0xFF5F),
]


def gb2312() -> set[int]:
    chars = set()
    for hi in range(0xB0, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.add(ord(bytes([hi, lo]).decode("gb2312")))
            except UnicodeDecodeError:
                pass
    return chars


def used_by_the_course() -> set[int]:
    files = [
        *(ROOT / "docs" / "zh").rglob("*.md"),
        *(ROOT / "notebooks").glob("*.py"),
        *(ROOT / "src" / "redis_course" / "l10n" / "locale").glob("*/LC_MESSAGES/course.po"),
    ]
    return {ord(c) for f in files if f.exists() for c in f.read_text(encoding="utf-8") if ord(c) >= 0x80}


def main(source: str) -> None:
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    if source.endswith(".ttc"):
        font = next(f for f in TTCollection(source).fonts if f["name"].getDebugName(1) == "Noto Sans CJK SC")
    else:
        font = TTFont(source)
    wanted = {c for lo, hi in RANGES for c in range(lo, hi)} | gb2312() | used_by_the_course()
    options = subset.Options()
    options.layout_features = ["kern", "liga", "locl", "palt"]
    options.hinting = False
    options.name_IDs = ["*"]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(c for c in wanted if c in font.getBestCmap()))
    subsetter.subset(font)
    font.save(OUT)
    print(f"{OUT.name}: {len(font.getBestCmap())} characters, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
