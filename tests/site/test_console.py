"""The Redis console under the transcripts, in Chromium: one browser, one page per language, a handful
of consoles.  Each console seeded with a transcript prints what the page shows; two clients make
EXEC fail after WATCH; a Lua example gets the explanation and a link to the notebook; nothing is
requested from another host, before or after the click, and nothing of the runtime before it.

Printed, not asserted (timings belong in bench/): the time from the click to the first answer, the
bytes a first click loads and what a page pays without a click.  Screenshots go to /tmp."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from redis_course.core.transcripts import find_blocks

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp")
FIRST_ANSWER_TIMEOUT = 240_000  # ms; a busy two-core machine compiles 10 MB of WebAssembly slowly
PROMPT = re.compile(r"^redis(?:\(TX\))?> ")
# per language: a page, the transcripts to run there (indexes among its transcripts), the Lua one
PLAN = {
    "en": ("02-atomicity", [0, 1, 2, 3, 4], 5),
    "ru": ("01-incr", [0, 6, 8], None),
    "zh": ("03-counters", [2, 6, 10], 4),
}


def _lines(text: str) -> list[str]:
    """Non-empty lines, the TX prompt as the plain one (pages write either)."""
    return [PROMPT.sub("redis> ", ln.rstrip()) for ln in text.split("\n") if ln.strip()]


@pytest.fixture(scope="module")
def console_site(built_site):
    root = built_site.require()
    if not (root / "console").is_dir():
        reason = "the site was built without the browser console (its runtime could not be downloaded)"
        if os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1":  # CI, as conftest's browser fixture
            pytest.fail(reason + "; the console tests are required here")
        pytest.skip(reason)
    return root


def _wait_for_entries(page, console, count: int) -> None:
    page.wait_for_function(
        "([el, n]) => el.querySelectorAll('.rc-out[data-client=\"0\"] .rc-entry').length >= n",
        arg=[console.element_handle(), count],
        timeout=FIRST_ANSWER_TIMEOUT,
    )


def _open(page, index: int):
    """Click the Run button of the page's transcript ``index`` (selecting its content tab first); the console."""
    button = page.locator("button.rc-run").nth(index)
    button.evaluate("""b => {
        const block = b.closest(".tabbed-block");
        if (!block) return;
        const i = Array.from(block.parentNode.children).indexOf(block);
        block.closest(".tabbed-set").querySelectorAll(":scope > .tabbed-labels > label")[i].click();
    }""")
    button.click()
    return page.locator(f'.rc-console[data-block="{index}"]')


def _type(page, console, client: int, line: str) -> None:
    console.locator(".rc-tab").nth(client).click()
    before = console.locator(f'.rc-out[data-client="{client}"] .rc-entry').count()
    box = console.locator("input.rc-input")
    box.fill(line)
    box.press("Enter")
    page.wait_for_function(
        '([el, c, n]) => el.querySelectorAll(`.rc-out[data-client="${c}"] .rc-entry`).length > n',
        arg=[console.element_handle(), client, before],
        timeout=30_000,
    )


def _last_reply(console, client: int) -> list[str]:
    """The last reply the reader sees: read from the one visible pane, which must be ``client``'s."""
    visible = console.locator(".rc-out:visible")
    assert visible.count() == 1, "both clients' panes are shown at once"
    assert visible.get_attribute("data-client") == str(client)
    return _lines(visible.locator(".rc-entry").last.inner_text())[1:]


def test_consoles_in_three_languages(browser, site_url, console_site, built_site):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    urls: list[str] = []
    context.on("request", lambda req: urls.append(req.url))
    errors: list[str] = []
    report = []
    try:
        for lang, (lesson, runs, lua) in PLAN.items():
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            first_url = len(urls)
            page.goto(f"{site_url}/{lang}/{lesson}/")
            blocks = find_blocks(_markdown(lang, lesson))
            shown_blocks = _transcripts_on(page)
            assert page.locator("button.rc-run").count() == len(blocks), "one Run button per transcript"
            assert not [u for u in urls[first_url:] if "/console/" in u], "the runtime loaded before any click"

            started = time.monotonic()
            for k, index in enumerate(runs):
                console = _open(page, index)
                _wait_for_entries(page, console, len(blocks[index].steps))
                if k == 0:
                    report.append(
                        (lang, time.monotonic() - started, page.get_attribute("html", "data-redis-console-timings"))
                    )
                shown = _lines(shown_blocks[index])
                printed = _lines("".join(console.locator('.rc-out[data-client="0"] .rc-entry').all_text_contents()))
                assert printed == shown, f"{lang}/{lesson} transcript {index}"

            if lua is not None:
                console = _open(page, lua)
                note = console.locator(".rc-note[data-note=lua]").first
                note.wait_for(timeout=30_000)
                assert "Lua" in note.text_content() and note.locator("a").get_attribute("href") == "notebook/"
                link = note.locator("a")
                assert link.evaluate("a => getComputedStyle(a).textDecorationLine") == "underline", (
                    "the notebook link is told from the note's text by colour alone (axe: link-in-text-block)"
                )
                eval_entry = console.locator(".rc-entry.rc-noted").first.text_content()
                assert _lines(eval_entry) == [_lines(eval_entry)[0]], "EVAL printed a reply instead of the note"

            if lang == "en":
                _watch_with_two_clients(page)
            if lang in ("ru", "zh"):
                first = page.locator(f'.rc-console[data-block="{runs[0]}"]')
                first.evaluate("el => el.scrollIntoView({block: 'center'})")  # clear of the sticky header
                shot = SHOTS / f"redis-console-{lang}.png"
                first.screenshot(path=str(shot))
                report.append((lang, "screenshot", str(shot)))
            assert sum(1 for u in urls[first_url:] if u.endswith("pyodide.asm.wasm")) == 1, (
                "a second console of the page loaded the runtime again"
            )
            page.close()
    finally:
        context.close()

    off = [u for u in urls if not u.startswith(("data:", "blob:", "about:")) and urlsplit(u).hostname != "127.0.0.1"]
    assert not off, f"requests to other hosts: {off}"
    assert not errors, errors

    shipped = sorted({urlsplit(u).path for u in urls if "/console/" in urlsplit(u).path})
    first_click = sum((console_site / p.lstrip("/")).stat().st_size for p in shipped)
    loader = (console_site / "en" / "assets" / "javascripts" / "console.js").stat().st_size
    page_html = (console_site / "en" / "02-atomicity" / "index.html").read_text(encoding="utf-8")
    block = re.search(r'<script id="redis-console-settings"[^>]*>(.*?)</script>', page_html, re.S)
    settings = len(block.group(0).encode())
    transfer = json.loads(block.group(1))["transfer"]
    print(
        f"\nbrowser console: a first click loads {first_click:,} bytes in {len(shipped)} files "
        f"({transfer:,} over the network); "
        f"a page without a click pays {loader + settings:,} bytes (console.js {loader:,}, settings {settings:,})"
    )
    for row in report:
        if row[1] == "screenshot":
            print(f"  {row[0]}: screenshot {row[2]}")
        else:
            print(f"  {row[0]}: first answer {row[1]:.1f} s after the click; worker stages (ms) {row[2]}")


def _transcripts_on(page) -> list[str]:
    """The text of every code block of the page whose first line is a redis-cli prompt (as console.js finds them),
    but for the commands of the page's questions, which console.js numbers apart."""
    return page.evaluate("""() => Array.from(document.querySelectorAll("pre > code"))
        .filter(c => !c.closest(".course-quiz")).map(c => c.textContent)
        .filter(t => /^redis(\\(TX\\))?> /.test(t.split("\\n").filter(l => l.trim())[0] || ""))""")


def _markdown(lang: str, lesson: str) -> str:
    from redis_course import paths

    return (paths.DOCS / lang / lesson / "index.md").read_text(encoding="utf-8")


def _watch_with_two_clients(page) -> None:
    """In the first console (still open), after a reset: client 1 watches a key, client 2 changes it,
    client 1's EXEC returns (nil)."""
    page.locator("button.rc-run").first.click()  # an open console is focused, not opened twice
    assert page.locator(".rc-console").count() == len(PLAN["en"][1]) + 1
    console = page.locator('.rc-console[data-block="0"]')
    console.locator("button.rc-reset").click()
    page.wait_for_function("el => el.querySelectorAll('.rc-entry').length === 0", arg=console.element_handle())
    for client, line, reply in [
        (0, "SET balance 100", ["OK"]),
        (0, "WATCH balance", ["OK"]),
        (1, "DECRBY balance 30", ["(integer) 70"]),
        (0, "MULTI", ["OK"]),
        (0, "DECRBY balance 30", ["QUEUED"]),
        (0, "EXEC", ["(nil)"]),
        (1, "GET balance", ['"70"']),
    ]:
        _type(page, console, client, line)
        assert _last_reply(console, client) == reply, line
        # the pane shows what this client did: the other client's commands are not in it
        seen = console.locator(".rc-out:visible").inner_text()
        assert ("WATCH balance" in seen) == (client == 0 and line != "SET balance 100"), (client, seen)


def test_the_status_line_is_readable_on_a_phone(browser, site_url, console_site):
    """At 360 px the tabs and buttons fill the bar: the status must wrap below them, not into a column."""
    context = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{site_url}/zh/03-counters/")
        page.locator("button.rc-run").first.click()
        status = page.locator('.rc-console[data-block="0"] .rc-status')
        page.wait_for_function("el => el.textContent.length > 10", arg=status.element_handle())
        width = status.evaluate("el => el.getBoundingClientRect().width")
        bar = page.locator('.rc-console[data-block="0"] .rc-bar').evaluate("el => el.getBoundingClientRect().width")
        assert width >= 0.6 * bar, f"the status line is {width:.0f} px wide in a {bar:.0f} px bar"
    finally:
        context.close()


def test_a_page_opened_as_a_file_says_to_serve_it(browser, console_site):
    """Browsers do not load WebAssembly for file:// pages: the console says how to open the site instead."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto((console_site / "ru" / "02-atomicity" / "index.html").as_uri())
        page.locator("button.rc-run").first.click()
        status = page.locator('.rc-console[data-block="0"] .rc-status')
        status.wait_for()
        assert status.get_attribute("data-kind") == "error"
        assert "python3 run.py serve" in status.text_content() and "HTTP" in status.text_content()
        assert not page.locator(".rc-entry").count()
    finally:
        context.close()


def test_a_page_after_the_first_restores_the_snapshot_from_the_cache(browser, site_url, console_site):
    """A site built with Node ships a memory snapshot: the console of a second page restores it (the
    path the worker took, not a time) and downloads nothing, the runtime and snapshot kept by the browser.
    A snapshot that cannot be restored falls back on starting Python: the first page's answers come,
    and this test says why the fast path was not taken."""
    html = (console_site / "en" / "02-atomicity" / "index.html").read_text(encoding="utf-8")
    cfg = json.loads(re.search(r'<script id="redis-console-settings"[^>]*>(.*?)</script>', html, re.S).group(1))
    if not cfg.get("snapshot"):
        if shutil.which("node"):
            pytest.fail("Node is here but the site has no snapshot: the build's log says why")
        pytest.skip("the site was built without Node: no snapshot, the console starts Python on every page")
    context = browser.new_context()
    try:
        page = context.new_page()
        seen = []
        for lesson, entries in (("02-atomicity", 4), ("01-incr", 1)):
            page.goto(f"{site_url}/en/{lesson}/")
            console = _open(page, 0)
            _wait_for_entries(page, console, entries)
            path = page.get_attribute("html", "data-redis-console-path")
            fallback = page.get_attribute("html", "data-redis-console-fallback")
            seen.append((lesson, path, int(page.get_attribute("html", "data-redis-console-transferred"))))
            assert path == "snapshot", f"{lesson}: the console started Python ({path}): {fallback}"
            assert "MB" in console.locator(".rc-status").text_content()
        (_, _, first), (_, _, second) = seen
        assert first > 1_000_000, seen  # the first page downloaded the runtime and the snapshot
        assert second == 0, f"the second page downloaded {second} bytes again: {seen}"
    finally:
        context.close()


@pytest.mark.parametrize("broken", ["missing", "corrupt"])
def test_a_snapshot_that_cannot_be_restored_falls_back_on_starting_python(browser, site_url, console_site, broken):
    """Without its snapshot (a 404) or with a damaged one, the console starts Python from the packages,
    as a site built without Node does, and prints the same replies; the page tells why."""
    html = (console_site / "ru" / "01-incr" / "index.html").read_text(encoding="utf-8")
    if '"snapshot": null' in html or '"snapshot"' not in html:
        pytest.skip("the site has no snapshot to break")
    context = browser.new_context()
    try:
        if broken == "missing":
            context.route("**/console/snapshot-*", lambda route: route.fulfill(status=404, body="gone"))
        else:  # a gzip stream that ends in the middle
            context.route(
                "**/console/snapshot-*",
                lambda route: route.fulfill(status=200, body=b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(64)),
            )
        page = context.new_page()
        page.goto(f"{site_url}/ru/01-incr/")
        console = _open(page, 0)
        steps = find_blocks(_markdown("ru", "01-incr"))[0].steps
        _wait_for_entries(page, console, len(steps))
        assert page.get_attribute("html", "data-redis-console-path") == "packages"
        assert page.get_attribute("html", "data-redis-console-fallback"), "the page does not say why"
        printed = _lines("".join(console.locator('.rc-out[data-client="0"] .rc-entry').all_text_contents()))
        assert printed == _lines(_transcripts_on(page)[0])
    finally:
        context.close()
