"""mkdocs hook: a lesson page gets its questions at the end of their sections, and a summary at its end.

A question names a heading id of the lesson page (``section``); it goes at the end of the ``##``
section that holds that heading, before the next ``##`` heading.  The Markdown gets only a marker;
the questions are rendered into the page's HTML (:mod:`.render`) with the section's title in the
page's language, and the page gets ``assets/javascripts/quiz.js`` (no request leaves the site).

Why not a plugin such as mkdocs-quiz: its questions are written in each page's Markdown, so the
three languages would hold three copies of the ids, options and answers, and there would be no
one source to prove the answers by executing them; it has no predict-the-reply or two-client race
kind, and one explanation per question rather than one per wrong option.
"""

from __future__ import annotations

import re

from redis_course import quiz
from redis_course.quiz import render

_LESSON = re.compile(r"^(\d\d-[^/]+)/index\.md$")
_H2 = re.compile(r"^##\s+.*?\{[^}]*#([A-Za-z0-9_\-:.]+)[^}]*\}\s*$")
_HN = re.compile(r"^#{2,6}\s+.*?\{[^}]*#([A-Za-z0-9_\-:.]+)[^}]*\}\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SLOT = re.compile(r'<div class="course-quiz-slot" data-quiz="([^"]*)"></div>')
_SUMMARY = '<div class="course-quiz-summary-slot"></div>'


class QuizPlacementError(quiz.QuizError):
    pass


def _source(page):
    m = _LESSON.match(page.file.src_uri)
    if not m or not (quiz.QUIZZES / f"{m.group(1)}.yml").exists():
        return None
    return quiz.load(m.group(1))


def place(markdown: str, questions: list[dict], where: str = "<page>") -> str:
    """The page's Markdown with a marker for each section's questions and one for the summary."""
    lines = markdown.split("\n")
    owner: dict[str, int] = {}  # heading id -> index of the line of the ## section holding it
    h2_lines: list[int] = []
    fence = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            fence = None if fence and m.group(1)[0] == fence else (fence or m.group(1)[0])
            continue
        if fence:
            continue
        h2 = _H2.match(line)
        if h2:
            h2_lines.append(i)
        hn = _HN.match(line)
        if hn and h2_lines:
            owner[hn.group(1)] = h2_lines[-1]
    ends = {start: (h2_lines[k + 1] if k + 1 < len(h2_lines) else len(lines)) for k, start in enumerate(h2_lines)}
    at: dict[int, list[str]] = {}
    for q in questions:
        if q["section"] not in owner:
            raise QuizPlacementError(
                f"{where}: question {q['id']} names section {q['section']!r}, which is no heading id of the page."
            )
        at.setdefault(ends[owner[q["section"]]], []).append(q["id"])
    for end in sorted(at, reverse=True):
        lines[end:end] = ["", f'<div class="course-quiz-slot" data-quiz="{" ".join(at[end])}"></div>', ""]
    return "\n".join(lines) + "\n\n" + _SUMMARY + "\n"


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 - mkdocs' hook signature
    src = _source(page)
    if not src:
        return markdown
    return place(markdown, src["questions"], page.file.src_uri)


def _titles(toc) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in toc:
        out[item.id] = item.title
        out.update(_titles(item.children))
    return out


def on_page_content(html, page, config, files):  # noqa: ARG001
    if 'class="course-quiz-slot"' not in html:
        return html
    src = _source(page)
    lang = config["theme"]["language"]
    s = render.strings(lang)
    titles = _titles(page.toc)
    by_id = {q["id"]: q for q in src["questions"]}
    html = _SLOT.sub(
        lambda m: "".join(
            render.question(by_id[i], lang, titles.get(by_id[i]["section"]), s) for i in m.group(1).split()
        ),
        html,
    )
    summary = render.summary(src["lesson"], src["questions"], lang, s)
    return html.replace(_SUMMARY, summary) if _SUMMARY in html else html + summary


def on_post_page(output: str, page, config) -> str:  # noqa: ARG001
    if 'class="course-quiz"' not in output or page.url is None:
        return output
    import json

    data = json.dumps(render.strings(config["theme"]["language"]), ensure_ascii=False).replace("</", "<\\/")
    script = ("../" * page.url.count("/")) + "assets/javascripts/quiz.js"
    tags = (
        f'<script id="course-quiz-strings" type="application/json">{data}</script>\n'
        f'<script src="{script}" defer></script>\n'
    )
    return output.replace("</body>", tags + "</body>", 1)
