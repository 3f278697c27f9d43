"""Charts in the reader's language, readable on a light and on a dark page.

    from redis_course import charts
    from redis_course.l10n import _

    fig, ax = plt.subplots()
    ax.set_xlabel(_("concurrent clients N"))
    charts.show(fig, alt=_("Lost updates grow with the number of clients; INCR loses none."))

* **Font.**  Labels in Russian and Chinese need glyphs that a fresh machine may not have (matplotlib's
  DejaVu Sans has Cyrillic but no Chinese).  The course ships ``fonts/NotoSansCJKsc-course.otf``:
  Noto Sans CJK SC (SIL Open Font License 1.1, see ``fonts/OFL.txt``) cut down to Latin, Cyrillic,
  punctuation and the 6,763 characters of GB 2312 plus every Chinese character the course uses.
  One font draws all three languages, so a chart looks the same in each; DejaVu Sans stays as the
  fallback for any other symbol.
* **Dark mode.**  :func:`show` renders the figure twice: on white (what Jupyter shows) and on a
  transparent background with light text (what the site shows in dark mode: the page renders each
  with Material's ``#only-light`` / ``#only-dark``).  The colour cycle is chosen so that every line
  has a contrast of at least 3:1 on both backgrounds.
* **Alt text.**  :func:`show` stores the alt text in the output's metadata; the rendered page uses it.
"""

from __future__ import annotations

import base64
import io
from datetime import date

from .paths import CJK_FONT

FONT_FILE = CJK_FONT
FONT_FAMILY = "Noto Sans CJK SC"
DARK_MIME = "image/vnd.course.dark+png"  # a second PNG for dark pages; Jupyter shows image/png
PAGE_BG = {"light": "#ffffff", "dark": "#1e2029"}  # Material's default and slate page backgrounds
CYCLE = ["#2f80c8", "#d96a00", "#2ca02c", "#d62728", "#9467bd", "#1a9fad", "#c4569f", "#8a8a8a"]
THEMES = {
    "light": {
        "text": "#24292f",
        "axis": "#57606a",
        "grid": "#d0d7de",
        "face": "#ffffff",
        "legend": "#ffffff",
        "legend_edge": "#d0d7de",
    },
    "dark": {
        "text": "#e6edf3",
        "axis": "#9aa4ae",
        "grid": "#3d444d",
        "face": "none",
        "legend": "#1e2029",
        "legend_edge": "#3d444d",
    },
}
DPI = 110
_ready = False


def setup() -> None:
    """Register the shipped font and the course's style (once per process)."""
    global _ready
    if _ready:
        return
    import matplotlib as mpl
    from matplotlib import font_manager

    if FONT_FILE.exists():
        font_manager.fontManager.addfont(str(FONT_FILE))
    theme = THEMES["light"]
    mpl.rcParams.update(
        {
            "font.family": "sans-serif",
            "font.sans-serif": [FONT_FAMILY, "DejaVu Sans"],
            "axes.prop_cycle": mpl.cycler(color=CYCLE),
            "axes.unicode_minus": True,
            "text.color": theme["text"],
            "axes.labelcolor": theme["text"],
            "axes.edgecolor": theme["axis"],
            "xtick.color": theme["axis"],
            "ytick.color": theme["axis"],
            "grid.color": theme["grid"],
            "legend.facecolor": theme["legend"],
            "legend.edgecolor": theme["legend_edge"],
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
        }
    )
    _ready = True


def _recolor(fig, old: dict, new: dict) -> None:
    """Swap one theme's colours for another's on every part that carries a theme colour."""
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D
    from matplotlib.text import Text

    def swap(color, kind):
        """``new[kind]`` (with ``color``'s transparency) where ``color`` is ``old[kind]``, else ``color``."""
        try:
            rgba = to_rgba(color)
        except ValueError:
            return color
        return to_rgba(new[kind], rgba[3]) if to_rgba(old[kind])[:3] == rgba[:3] else color

    for text in fig.findobj(Text):
        text.set_color(swap(text.get_color(), "text"))
    for ax in fig.axes:
        for spine in ax.spines.values():
            spine.set_edgecolor(swap(spine.get_edgecolor(), "axis"))
        ax.tick_params(which="both", color=new["axis"], labelcolor=new["axis"])
        for line in ax.get_xgridlines() + ax.get_ygridlines():
            line.set_color(swap(line.get_color(), "grid"))
        for line in ax.findobj(Line2D):
            line.set_color(swap(line.get_color(), "grid"))
        ax.set_facecolor(new["face"])
        legend = ax.get_legend()
        if legend is not None:
            frame = legend.get_frame()
            frame.set_facecolor(swap(frame.get_facecolor(), "legend"))
            frame.set_edgecolor(swap(frame.get_edgecolor(), "legend_edge"))
    fig.patch.set_facecolor(new["face"])


def render(fig, theme: str = "light") -> bytes:
    """The figure as PNG bytes in ``theme`` (``light``: on white; ``dark``: transparent, light text)."""
    setup()
    if theme != "light":
        _recolor(fig, THEMES["light"], THEMES[theme])
    buf = io.BytesIO()
    try:
        fig.savefig(
            buf,
            format="png",
            dpi=DPI,
            bbox_inches="tight",
            transparent=theme != "light",
            facecolor=THEMES[theme]["face"] if theme == "light" else "none",
        )
    finally:
        if theme != "light":
            _recolor(fig, THEMES[theme], THEMES["light"])
    return buf.getvalue()


def show(fig, alt: str) -> None:
    """Display ``fig`` in the notebook (light), with a dark variant and ``alt`` for the site; close it."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    try:
        light, dark = render(fig, "light"), render(fig, "dark")
    finally:
        plt.close(fig)
    data = {
        "image/png": base64.b64encode(light).decode("ascii"),
        DARK_MIME: base64.b64encode(dark).decode("ascii"),
        "text/plain": alt,
    }
    display(data, raw=True, metadata={"course": {"alt": alt}})


def listing(items, separator: str = "; ") -> str:
    """Items joined as the reader's language lists them: ``"; "`` (``；`` in Chinese) between long items,
    ``", "`` (``、`` in Chinese) between short ones."""
    from .l10n import pgettext

    marks = {"; ": pgettext("list separator", "; "), ", ": pgettext("list separator", ", ")}
    return marks.get(separator, separator).join(str(item) for item in items)


def day_label(day: date, lang: str | None = None) -> str:
    """A short weekday and date in the reader's language: ``Fri\\n05 Jan``, ``пт\\n5 янв.``, ``周五\\n1月5日``."""
    from babel.dates import format_date

    from .l10n import current_lang

    lang = lang or current_lang()
    pattern = {"en": "EEE\nd MMM", "ru": "EEE\nd MMM", "zh": "EEE\nM月d日"}.get(lang, "EEE\nd MMM")
    return format_date(day, pattern, locale={"zh": "zh_Hans_CN"}.get(lang, lang))


def contrast(color: str, background: str) -> float:
    """WCAG contrast ratio between two colours (3:1 is the minimum for lines and marks)."""
    from matplotlib.colors import to_rgb

    def luminance(c: str) -> float:
        r, g, b = (x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in to_rgb(c))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((luminance(color), luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


setup()  # before the first figure: text objects take the font family when they are created
