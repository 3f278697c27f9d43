"""Charts in the reader's language: a font with every glyph, a dark variant, alt text on the page."""

from __future__ import annotations

import base64
import io
import warnings
from datetime import date

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from redis_course.i18n import catalogs  # noqa: E402
from redis_course import charts, l10n, tables  # noqa: E402


def _figure(lang: str):
    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.plot([1, 2, 4], [0, 3, 9], "o-", label="GET + SET")
    ax.set_xlabel(l10n._("concurrent clients N", lang=lang))
    ax.set_ylabel(l10n._("lost updates (of N × {k})", lang=lang, k=25))
    ax.set_title(l10n._("Post 17, views per UTC day (MGET of 7 daily keys)", lang=lang))
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def test_the_shipped_font_has_every_character_of_the_catalogs():
    from fontTools.ttLib import TTFont

    cmap = TTFont(charts.FONT_FILE).getBestCmap()
    missing = set()
    for lang in ("ru", "zh"):
        for m in catalogs.read(lang):
            strings = m.string if isinstance(m.string, (list, tuple)) else [m.string]
            missing |= {
                ch for s in strings if s for ch in s if ord(ch) > 0x7F and ord(ch) not in cmap and ch not in "⏭"
            }  # the skip sign is printed, never drawn
    assert not missing, f"run src/redis_course/fonts/make_subset.py: {''.join(sorted(missing))!r}"


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_labels_render_without_missing_glyphs(lang):
    fig = _figure(lang)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = charts.render(fig, "light")
    plt.close(fig)
    assert png.startswith(b"\x89PNG")
    assert not [w for w in caught if "missing from" in str(w.message)], [str(w.message) for w in caught]


def test_without_the_shipped_font_chinese_would_be_missing():
    """The check above can fail: DejaVu Sans alone has no Chinese glyphs."""
    fig = _figure("zh")
    for text in fig.findobj(matplotlib.text.Text):
        text.set_fontfamily("DejaVu Sans")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)
    assert [w for w in caught if "missing from" in str(w.message)]


def test_colours_are_readable_on_light_and_dark_pages():
    for color in charts.CYCLE + ["tab:red", "tab:green", "#d9413a"]:
        for theme, background in charts.PAGE_BG.items():
            assert charts.contrast(color, background) >= 3, (color, theme)
    for theme, colors in charts.THEMES.items():
        assert charts.contrast(colors["text"], charts.PAGE_BG[theme]) >= 7, theme
    assert charts.contrast("#ffd700", charts.PAGE_BG["light"]) < 3  # the check can fail


def test_dark_variant_is_transparent_with_light_text_and_leaves_the_figure_as_it_was():
    from PIL import Image

    fig = _figure("zh")
    light1 = charts.render(fig, "light")
    dark = charts.render(fig, "dark")
    light2 = charts.render(fig, "light")
    plt.close(fig)
    assert light1 == light2
    light_img = Image.open(io.BytesIO(light1)).convert("RGBA")
    dark_img = Image.open(io.BytesIO(dark)).convert("RGBA")
    assert light_img.getpixel((1, 1))[3] == 255 and dark_img.getpixel((1, 1))[3] == 0
    text_light = charts.THEMES["light"]["text"].lstrip("#")
    text_dark = charts.THEMES["dark"]["text"].lstrip("#")
    rgb = lambda hexa: tuple(int(hexa[i : i + 2], 16) for i in (0, 2, 4))  # noqa: E731
    opaque = {
        dark_img.getpixel((x, y))[:3]
        for x in range(dark_img.width)
        for y in range(dark_img.height)
        if dark_img.getpixel((x, y))[3] == 255
    }
    assert rgb(text_dark) in opaque and rgb(text_light) not in opaque


def test_show_displays_both_variants_with_the_alt_text(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda data, raw, metadata: shown.append((data, metadata)))
    fig = _figure("ru")
    charts.show(fig, alt="Линейный график")
    data, metadata = shown[0]
    assert set(data) == {"image/png", charts.DARK_MIME, "text/plain"}
    assert metadata == {"course": {"alt": "Линейный график"}}
    assert base64.b64decode(data[charts.DARK_MIME]).startswith(b"\x89PNG")
    assert not plt.fignum_exists(fig.number)


def test_the_page_shows_the_variant_of_its_colour_scheme_with_alt_text():
    import nbformat

    from redis_course.notebooks import render

    png = base64.b64encode(b"\x89PNG fake").decode()
    nb = nbformat.v4.new_notebook(metadata={"course": {"lang": "ru"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Заголовок"),
        nbformat.v4.new_code_cell("show()"),
        nbformat.v4.new_code_cell("plain()"),
    ]
    nb.cells[1].outputs = [
        nbformat.v4.new_output(
            "display_data",
            metadata={"course": {"alt": "График [A]\nдвух строк"}},
            data={"image/png": png, charts.DARK_MIME: png},
        )
    ]
    nb.cells[2].outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    md, images = render.render(nb, "02-atomicity", "ru")
    # each variant is a link to its own image (a tap opens it at full size), shown in its scheme only
    assert (
        "[![График (A) двух строк](notebook_files/cell001-0.png#only-light)](notebook_files/cell001-0.png)"
        "{ .chart-zoom .chart-light }"
        "[![График (A) двух строк](notebook_files/cell001-0-dark.png#only-dark)](notebook_files/cell001-0-dark.png)"
        "{ .chart-zoom .chart-dark }\n"
    ) in md
    assert images["notebook_files/cell001-0-dark.png"] == b"\x89PNG fake"
    # no alt given: the page's title
    assert "[![График: Заголовок](notebook_files/cell002-0.png)](notebook_files/cell002-0.png){ .chart-zoom }\n" in md


def test_day_labels_in_the_readers_language():
    day = date(2026, 5, 1)
    assert charts.day_label(day, "en") == "Fri\n1 May"
    assert charts.day_label(day, "ru") == "пт\n1 мая"
    assert charts.day_label(day, "zh") == "周五\n5月1日"


def test_tables_align_chinese_by_display_width():
    text = tables.table(["模式", "lost"], [("rdb", 12), ("aof-always", 0)])
    lines = text.splitlines()
    assert [tables.width(line.rstrip()) for line in lines] == [16, 16, 16]
    assert lines[0] == "模式        lost"
