"""The lessons' questions in a real browser (Chromium through Playwright), keyboard only: one question
of each kind answered wrongly and then rightly in each language, the explanation shown each time;
the answers kept across a reload and across a language switch (localStorage, per question id); the
summary and its reset; restoring answers on load changes the size of no box (no layout shift); no request leaves 127.0.0.1."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from test_browser import Requests, switch_language

from redis_course.quiz.render import strings

pytestmark = pytest.mark.browser

LESSON = "02-atomicity"
# question id: (options ticked for a wrong answer, the option whose explanation that shows, options ticked for the right one)
CASES = {
    "exec-no-rollback": (["b"], "b", ["a"]),  # predict the reply
    "pipeline-is-not-atomic": (["b"], "b", ["a"]),  # multiple choice
    "lost-update-get-set": (["b"], "a", ["a", "b"]),  # spot the race: "1" left out
}

# the height of every question box and of the summary, once the page and its fonts have loaded
HEIGHTS = """async () => {
  // every declared font loaded first (a web font otherwise starts loading only when laid-out text
  // needs it, and ready may resolve before), so that both loads are measured with the same fonts
  await Promise.all(Array.from(document.fonts).map(function (f) { return f.load().catch(function () {}); }));
  document.body.getBoundingClientRect();
  await document.fonts.ready;
  await new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(r); }); });
  await document.fonts.ready;
  return Array.from(document.querySelectorAll('.course-quiz, .course-quiz-summary'))
    .map(function (el) { return [el.id || el.className, Math.round(el.getBoundingClientRect().height)]; });
}"""


def _tick(page, box, values):
    """Leave exactly ``values`` ticked, with the keyboard (Space on a focused input), then press Check with Enter."""
    inputs = box.locator(".course-quiz__options input")
    for i in range(inputs.count()):
        inp = inputs.nth(i)
        want = inp.get_attribute("value") in values
        if inp.is_checked() != want and (want or inp.get_attribute("type") == "checkbox"):
            inp.focus()
            page.keyboard.press("Space")
        assert inp.is_checked() == want or inp.get_attribute("type") == "radio"
    box.locator(".course-quiz__check").focus()
    page.keyboard.press("Enter")


def _visible_why(box) -> list[str]:
    return [el.get_attribute("data-for") for el in box.locator(".course-quiz__why").all() if el.is_visible()]


def _answer_each_kind(page, lang):
    s = strings(lang)
    for qid, (wrong, shown, right) in CASES.items():
        box = page.locator(f"#quiz-{qid}")
        box.scroll_into_view_if_needed()
        assert not box.locator(".course-quiz__feedback").is_visible()
        _tick(page, box, wrong)
        assert box.locator(".course-quiz__status").inner_text().endswith(s["wrong"])
        assert _visible_why(box) == [shown], (lang, qid)
        assert box.locator(f'.course-quiz__why[data-for="{shown}"]').inner_text().strip()
        _tick(page, box, right)
        assert box.locator(".course-quiz__status").inner_text().endswith(s["right"])
        assert _visible_why(box) == ["right"], (lang, qid)
        assert box.locator(".course-quiz__see a").get_attribute("href").startswith("#")
        if qid == "exec-no-rollback":  # the prediction is shown beside the reply Redis gives
            assert box.locator("[data-predicted]").inner_text().startswith("1) (error)")


def _assert_restored(page, lang):
    s = strings(lang)
    for qid, (_wrong, _shown, right) in CASES.items():
        box = page.locator(f"#quiz-{qid}")
        box.scroll_into_view_if_needed()  # a block far below the first screen is laid out when the reader nears it
        expect(box.locator(".course-quiz__status")).to_have_text(s["answered_right"])
        ticked = [i.get_attribute("value") for i in box.locator(".course-quiz__options input").all() if i.is_checked()]
        assert sorted(ticked) == sorted(right), (lang, qid)
        assert not box.locator(".course-quiz__feedback").is_visible()
    total = page.locator(".course-quiz-summary [data-quiz-ref]").count()
    assert total >= 5
    score = page.locator(".course-quiz-summary__score").inner_text()
    assert score == s["summary_score"].format(answered=len(CASES), total=total, right=len(CASES)), score


def _assert_no_shift(page):
    """Restoring the answers on load changed the size of no box: with the fonts settled, the boxes as
    restored are as tall as after the page's own reset, which puts every box back as the build made it
    (unticked, empty status line, the summary's marks and words of an unanswered lesson).  Measured in
    one load, so that a web font arriving late cannot tell the two apart."""
    restored = page.evaluate(HEIGHTS)
    saved = page.evaluate("window.localStorage.getItem('redis-course:quiz:v1')")
    page.evaluate("document.querySelector('.course-quiz-summary__reset').click()")
    as_built = page.evaluate(HEIGHTS)
    page.evaluate("v => window.localStorage.setItem('redis-course:quiz:v1', v)", saved)
    page.reload()
    assert len(as_built) >= 6 and restored == as_built, f"{page.url}: restoring the answers changed the size of a box"


def test_questions_keyboard_only_in_three_languages(browser, site_url, built_site, artifacts):
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    requests = Requests(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{site_url}/en/{LESSON}/")
        assert page.locator(".course-quiz").count() >= 5
        if (built_site.require() / "console").is_dir():  # a predict question's commands open in the console
            assert page.locator("#quiz-exec-no-rollback button.rc-run-question").count() == 1
        assert page.locator(".course-quiz-summary__score").inner_text() == strings("en")["summary_none"]
        previous = None
        for lang in ("en", "ru", "zh"):
            if previous:
                switch_language(page, lang)  # the menu keeps the reader on the lesson
                assert f"/{lang}/{LESSON}/" in page.url
                _assert_restored(page, lang)  # answered in the previous language, shown in this one
            _answer_each_kind(page, lang)
            page.reload()
            _assert_restored(page, lang)
            _assert_no_shift(page)
            page.screenshot(path=str(artifacts / f"{lang}-quiz.png"), full_page=False)
            previous = lang

        # reset forgets this lesson's answers, here and after a reload
        s = strings("zh")
        reset = page.locator(".course-quiz-summary__reset")
        reset.focus()
        page.keyboard.press("Enter")
        assert page.locator(".course-quiz-summary__score").inner_text() == s["reset_done"]
        page.reload()
        assert page.locator(".course-quiz-summary__score").inner_text() == s["summary_none"]
        for qid in CASES:
            box = page.locator(f"#quiz-{qid}")
            assert box.locator(".course-quiz__status").inner_text() == ""
            assert not any(i.is_checked() for i in box.locator(".course-quiz__options input").all())
        stored = page.evaluate("window.localStorage.getItem('redis-course:quiz:v1')")
        assert all(qid not in (stored or "") for qid in CASES)
    finally:
        context.close()
    assert not errors, f"JavaScript errors: {errors}"
    assert not requests.off_machine(), f"requests to other hosts: {requests.off_machine()}"
