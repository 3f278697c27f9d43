"""Accessibility of every kind of page, checked by axe-core in Chromium: home, lesson, lab, notebook,
glossary, the 404 page and the search dialog with results, in each language, in the light and the
dark palette.  Not one serious or critical violation (contrast, names of links and buttons, ARIA...).

axe-core comes from npm (pinned version and checksum, cached: redis_course.npmfile) and is injected
into each page by Playwright; one browser, one page, so the whole check costs one browser start."""

from __future__ import annotations

import json

import pytest

from redis_course.npmfile import npm_file

pytestmark = pytest.mark.browser

AXE = (
    "axe-core",
    "4.14.1",
    "axe.min.js",
    "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==",
)
PAGES = {  # page kind → path under /<lang>/
    "home": "",
    "lesson": "01-incr/",
    "lab": "01-incr/lab/",
    "notebook": "01-incr/notebook/",
    "charts": "04-rate-limiting/notebook/",  # a notebook with charts: links to the images, one per scheme
    "glossary": "glossary/",
    "404": "no-such-page/",
    "search": "",  # the home page with the search dialog open on results
}
QUERY = {"en": "incr", "ru": "счётчик", "zh": "计数器"}
SCHEMES = ("light", "dark")
BLOCKING = ("serious", "critical")


def open_search(page, query: str) -> None:
    box = page.locator("input.md-search__input")
    if not box.is_visible():  # narrow screens: the header's search button opens the dialog
        page.locator("label.md-header__button[for=__search]").click()
    box.click()
    box.fill(query)
    box.press("End")  # Material searches on keyup
    page.locator(".md-search-result__item").first.wait_for(state="visible", timeout=15_000)
    # the dialog and its results fade in: axe measures colours as drawn, so a half-faded result reads as
    # low contrast on a busy machine; scan once every transition has ended
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')", timeout=15_000)


def axe_violations(page) -> list[dict]:
    """axe's violations on the page as it is now (WCAG 2.x A/AA and best practices), serious and critical only."""
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                       nodes: v.nodes.map(n => ({target: n.target.join(' '),
                                                                 summary: (n.failureSummary || '').slice(0, 200)}))}));
    }""")
    return [v for v in result if v["impact"] in BLOCKING]


def scan_site(browser, site_url: str, langs=("en", "ru", "zh"), kinds=tuple(PAGES)) -> dict:
    """``{(lang, kind, scheme): [violation, ...]}`` for every page checked."""
    script = npm_file(*AXE).read_text(encoding="utf-8")
    found = {}
    for scheme in SCHEMES:  # a fresh context each: Material keeps the reader's palette in localStorage
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
        context.add_init_script(script)
        page = context.new_page()
        try:
            for lang in langs:
                for kind in kinds:
                    page.goto(f"{site_url}/{lang}/{PAGES[kind]}")
                    actual = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
                    assert actual == ("slate" if scheme == "dark" else "default"), (lang, kind, scheme, actual)
                    if kind == "search":
                        open_search(page, QUERY[lang])
                    found[(lang, kind, scheme)] = axe_violations(page)
        finally:
            context.close()
    return found


def report(found: dict) -> str:
    lines = []
    for (lang, kind, scheme), violations in found.items():
        for v in violations:
            targets = "; ".join(n["target"] for n in v["nodes"][:4])
            lines.append(f"/{lang}/ {kind} ({scheme}): {v['id']} [{v['impact']}] x{len(v['nodes'])}: {targets}")
    return "\n".join(lines)


def test_no_serious_accessibility_violations(browser, site_url, artifacts):
    found = scan_site(browser, site_url)
    assert len(found) == 3 * len(PAGES) * len(SCHEMES)
    (artifacts / "axe.json").write_text(
        json.dumps({" ".join(k): v for k, v in found.items()}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    nodes = sum(len(v["nodes"]) for vs in found.values() for v in vs)
    assert nodes == 0, f"{nodes} elements with serious or critical accessibility violations:\n{report(found)}"


def test_axe_finds_a_low_contrast_link(browser, site_url):
    """The check itself works: a grey-on-white link added to the page is reported."""
    context = browser.new_context()
    context.add_init_script(npm_file(*AXE).read_text(encoding="utf-8"))
    page = context.new_page()
    try:
        page.goto(f"{site_url}/en/")
        page.evaluate("""() => { const a = document.createElement('a'); a.href = '#'; a.textContent = 'faint link';
                                 a.style.color = '#bbb'; a.style.background = '#fff';
                                 document.querySelector('.md-content').prepend(a); }""")
        ids = {v["id"] for v in axe_violations(page)}
    finally:
        context.close()
    assert "color-contrast" in ids, ids
