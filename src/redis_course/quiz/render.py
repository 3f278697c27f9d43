"""The questions as HTML, in one language, for the lesson pages (the hook in :mod:`.hook` places them).

Everything is rendered at build time, so nothing moves when the script starts: options are native
radio buttons or checkboxes inside a ``fieldset`` with the prompt as its ``legend`` (keyboard and
screen readers work without any script), the status line has its height reserved, and the
explanations are in the page, ``hidden`` until the reader checks an answer.  ``quiz.js`` adds the
behaviour and keeps the answers in the browser (``localStorage``), under each question's
language-independent id, so an answer given in one language is there in the others.
"""

from __future__ import annotations

import html
import json

import markdown as _markdown

from ..l10n import N_, _
from . import option, right_ids

STRINGS = {
    "choice": N_("Multiple choice"),
    "predict": N_("Predict the reply"),
    "race": N_("Spot the race"),
    "predict_help": N_("The replies are hidden. Which reply does the last command print?"),
    "race_help": N_("Each client runs its steps in order; the two clients' steps can interleave in any order."),
    "race_before": N_("Before:"),
    "race_after": N_("At the end:"),
    "race_client": N_("Client {name}"),
    "race_if": N_("if {cond}:"),
    "check": N_("Check"),
    "right": N_("Right."),
    "wrong": N_("Not quite."),
    "pick": N_("Choose an answer first."),
    "answered_right": N_("Answered earlier: right."),
    "answered_wrong": N_("Answered earlier: not quite. Try again."),
    "you_predicted": N_("Your prediction:"),
    "redis_replies": N_("Redis replies:"),
    "misconception": N_("The mistake:"),
    "missed": N_("You left out a possible value:"),
    "read_again": N_("Read again:"),
    "summary_title": N_("Check your understanding"),
    "summary_score": N_("{answered} of {total} questions answered, {right} right."),
    "summary_none": N_("No question of this lesson answered yet."),
    "state_right": N_("right"),
    "state_wrong": N_("not yet right"),
    "state_open": N_("not answered"),
    "reset": N_("Reset this lesson's answers"),
    "reset_done": N_("The answers of this lesson are forgotten."),
    "stored": N_("Your answers stay in this browser (local storage); nothing is sent anywhere."),
}


def strings(lang: str) -> dict[str, str]:
    return {k: _(v, lang=lang) for k, v in STRINGS.items()}


def md(text: str) -> str:
    """Inline Markdown (code, emphasis, links) without the surrounding paragraph."""
    out = _markdown.markdown(text).strip()
    if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
        out = out[3:-4]
    return out


def _esc(s: str) -> str:
    return html.escape(s, quote=True)


def _reply(text: str) -> str:
    return f'<code class="course-quiz__reply">{_esc(text)}</code>'


def _step(step: dict, s: dict) -> str:
    cmd = _esc(step["run"])
    if step.get("as"):
        cmd += f' <span class="course-quiz__bind">→ {_esc(step["as"])}</span>'
    if step.get("if") is not None:
        cond = s["race_if"].replace("{cond}", str(step["if"]))
        return f'<span class="course-quiz__if">{_esc(cond)}</span> <code>{cmd}</code>'
    return f"<code>{cmd}</code>"


def _race_body(q: dict, s: dict) -> str:
    parts = [f'<p class="course-quiz__help">{_esc(s["race_help"])}</p>']
    if q.get("setup"):
        parts.append(
            f"<p>{_esc(s['race_before'])} " + ", ".join(f"<code>{_esc(c)}</code>" for c in q["setup"]) + "</p>"
        )
    cols = []
    for name, steps in q["clients"].items():
        items = "".join(f"<li>{_step(st, s)}</li>" for st in steps)
        cols.append(
            f'<div class="course-quiz__client"><p><strong>{_esc(s["race_client"].replace("{name}", name))}'
            f"</strong></p><ol>{items}</ol></div>"
        )
    parts.append(f'<div class="course-quiz__clients">{"".join(cols)}</div>')
    parts.append(f"<p>{_esc(s['race_after'])} <code>{_esc(q['check'])}</code></p>")
    return "".join(parts)


def question(q: dict, lang: str, section_title: str | None, s: dict | None = None) -> str:
    s = s or strings(lang)
    qid, kind = q["id"], q["kind"]
    name = f"quiz-{qid}"
    multi = kind == "race"
    body = ""
    if kind == "predict":
        lines = "\n".join(f"redis&gt; {_esc(c)}" for c in q["commands"])
        body = (
            f'<p class="course-quiz__help">{_esc(s["predict_help"])}</p>'
            f'<pre class="course-quiz__commands"><code>{lines}</code></pre>'
        )
    elif kind == "race":
        body = _race_body(q, s)
    opts = []
    for o in q["options"]:
        label = md(o["text"][lang]) if kind == "choice" else _reply(o["reply"])
        typ = "checkbox" if multi else "radio"
        opts.append(
            f'<li><label><input type="{typ}" name="{name}" value="{_esc(o["id"])}"> <span>{label}</span></label></li>'
        )
    feedback = [f'<div class="course-quiz__why" data-for="right"><p>{md(q["explain"][lang])}</p></div>']
    for oid, w in (q.get("wrong") or {}).items():
        lead = s["missed"] if multi and oid in right_ids(q) else s["misconception"]
        feedback.append(
            f'<div class="course-quiz__why" data-for="{_esc(oid)}" hidden><p><strong>{_esc(lead)}</strong> '
            f"{md(w['misconception'][lang])}</p><p>{md(w['explain'][lang])}</p></div>"
        )
    if kind == "predict":
        got = option(q, right_ids(q)[0])["reply"]
        feedback.insert(
            0,
            f'<p class="course-quiz__compare"><span>{_esc(s["you_predicted"])} '
            f'<code class="course-quiz__reply" data-predicted></code></span> '
            f"<span>{_esc(s['redis_replies'])} {_reply(got)}</span></p>",
        )
    if section_title:
        feedback.append(
            f'<p class="course-quiz__see">{_esc(s["read_again"])} '
            f'<a href="#{_esc(q["section"])}">{_esc(section_title)}</a></p>'
        )
    answer = json.dumps(right_ids(q))
    return (
        f'<section class="course-quiz" id="{name}" data-quiz-id="{_esc(qid)}" data-kind="{kind}" '
        f"data-answer='{_esc(answer)}'>"
        f'<fieldset><legend><span class="course-quiz__kind">{_esc(s[kind])}</span> '
        f'<span class="course-quiz__prompt">{md(q["prompt"][lang])}</span></legend>'
        f'{body}<ul class="course-quiz__options">{"".join(opts)}</ul>'
        f'<p class="course-quiz__actions"><button type="button" class="md-button course-quiz__check">'
        f'{_esc(s["check"])}</button> <span class="course-quiz__status" role="status" aria-live="polite"></span></p>'
        # a live region that is always there, so that a screen reader reads the explanation it reveals
        f'<div class="course-quiz__result" aria-live="polite"><div class="course-quiz__feedback" hidden>'
        f"{''.join(feedback)}</div></div>"
        f"</fieldset></section>"
    )


def summary(lesson: str, questions: list[dict], lang: str, s: dict | None = None) -> str:
    s = s or strings(lang)
    # the state: a one-character mark of fixed width on screen, the words for screen readers (out of the
    # layout), so that changing it never reflows the list
    items = "".join(
        f'<li data-quiz-ref="{_esc(q["id"])}"><span class="course-quiz-summary__mark" aria-hidden="true">–</span>'
        f'<span class="course-quiz-sr course-quiz-summary__state">({_esc(s["state_open"])})</span> '
        f'<a href="#quiz-{_esc(q["id"])}">{md(q["prompt"][lang])}</a></li>'
        for q in questions
    )
    return (
        f'<section class="course-quiz-summary" data-lesson="{_esc(lesson)}" aria-labelledby="quiz-summary-title">'
        f'<p class="course-quiz-summary__title" id="quiz-summary-title"><strong>{_esc(s["summary_title"])}</strong></p>'
        f'<p class="course-quiz-summary__score" role="status" aria-live="polite">{_esc(s["summary_none"])}</p>'
        f'<ol class="course-quiz-summary__list">{items}</ol>'
        f'<p><button type="button" class="md-button course-quiz-summary__reset">{_esc(s["reset"])}</button> '
        f'<span class="course-quiz-summary__note">{_esc(s["stored"])}</span></p></section>'
    )
