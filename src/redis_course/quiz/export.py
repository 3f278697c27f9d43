"""A lesson's questions for a learning platform: Moodle's GIFT and Moodle XML, in one language.

``course quiz export --format gift|moodle-xml LESSON --lang ru`` writes them; most learning
platforms import one of the two.  Every question becomes a multiple-choice question: ``choice`` and
``predict`` with one right answer, ``race`` with several (each right option a share of 100 %, each
wrong one a negative share, as Moodle scores multiple-answer questions).  The question text is
HTML: the prompt, the ``redis>`` commands or the two clients' steps; each option carries its
feedback (the misconception and its explanation), the question the explanation of the answer and a
link to the lesson's section on the published site.

Moodle XML is written with :mod:`xml.etree.ElementTree`; GIFT is plain text with ``~ = # { } :``
escaped (braces as ``&#123;`` and ``&#125;``), the text marked ``[html]`` and line breaks written ``\\n`` (a blank line ends a question).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

from .. import paths
from ..l10n import _
from . import load, option, right_ids
from .render import _race_body, md, strings

FORMATS = ("gift", "moodle-xml")
_HEADING = r"^#+\s+(?P<title>.*?)\s*\{{[^}}]*#{id}[\s}}]"


def section_title(lesson: str, lang: str, section: str) -> str | None:
    page = paths.DOCS / lang / lesson / "index.md"
    try:
        text = page.read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(_HEADING.format(id=re.escape(section)), text, re.MULTILINE)
    return m.group("title") if m else None


def _question_html(q: dict, lang: str, s: dict) -> str:
    parts = [f"<p>{md(q['prompt'][lang])}</p>"]
    if q["kind"] == "predict":
        parts.append(f"<p>{html.escape(s['predict_help'])}</p>")
        lines = "\n".join(f"redis&gt; {html.escape(c)}" for c in q["commands"])
        parts.append(f"<pre><code>{lines}</code></pre>")
    elif q["kind"] == "race":
        parts.append(_race_body(q, s))
    return "".join(parts)


def _option_html(q: dict, oid: str, lang: str) -> str:
    o = option(q, oid)
    return md(o["text"][lang]) if q["kind"] == "choice" else f"<code>{html.escape(o['reply'])}</code>"


def _feedback_html(q: dict, oid: str, lang: str, s: dict) -> str:
    w = (q.get("wrong") or {}).get(oid)
    if not w:
        return f"<p>{html.escape(s['right'])}</p>"
    if oid in right_ids(q):  # a possible value of a race: its feedback says why it is possible
        return f"<p>{md(w['explain'][lang])}</p>"
    lead = s["misconception"]
    return f"<p><strong>{html.escape(lead)}</strong> {md(w['misconception'][lang])}</p><p>{md(w['explain'][lang])}</p>"


def _general_html(q: dict, lesson: str, lang: str, s: dict, site_url: str) -> str:
    out = f"<p>{md(q['explain'][lang])}</p>"
    title = section_title(lesson, lang, q["section"])
    if title:
        url = f"{site_url}{lang}/{lesson}/#{q['section']}"
        out += f'<p>{html.escape(s["read_again"])} <a href="{html.escape(url)}">{html.escape(title)}</a></p>'
    return out


def category(lesson: str) -> str:
    """The question bank category: letters, digits and ``_`` only (GIFT parsers read ``[/\\w$]`` there)."""
    return "$course$/redis_course/" + re.sub(r"\W", "_", lesson)


def _fractions(q: dict) -> dict[str, float]:
    right = right_ids(q)
    wrong = [o["id"] for o in q["options"] if o["id"] not in right]
    if q["kind"] != "race":
        return {o["id"]: (100.0 if o["id"] in right else 0.0) for o in q["options"]}
    return {o["id"]: (100.0 / len(right) if o["id"] in right else -100.0 / len(wrong)) for o in q["options"]}


def _pct(x: float) -> str:
    return f"{x:.5f}".rstrip("0").rstrip(".")


def items(lesson: str, lang: str, site_url: str | None = None):
    """(source, [(question, text html, general feedback html, [(option id, html, fraction, feedback html)])])."""
    from ..site.build import base_url

    if lang not in paths.LANGS:
        raise ValueError(f"unknown language {lang!r}")
    src = load(lesson)
    url = base_url(site_url)
    s = strings(lang)
    out = []
    for q in src["questions"]:
        fr = _fractions(q)
        opts = [
            (o["id"], _option_html(q, o["id"], lang), fr[o["id"]], _feedback_html(q, o["id"], lang, s))
            for o in q["options"]
        ]
        out.append((q, _question_html(q, lang, s), _general_html(q, src["lesson"], lang, s, url), opts))
    return src, out


# ------------------------------------------------------------------ GIFT


def gift_escape(text: str) -> str:
    """GIFT's special characters escaped; braces, which some GIFT parsers end an answer list on even
    when escaped, written as HTML character references (the text is HTML)."""
    text = text.replace("{", "&#123;").replace("}", "&#125;")
    text = re.sub(r"([~=#{}:\\])", r"\\\1", text)
    return text.replace("\r", "").replace("\n", "\\n")


def gift(lesson: str, lang: str, site_url: str | None = None) -> str:
    src, qs = items(lesson, lang, site_url)
    out = [
        f"// {src['lesson']}: " + _("Check your understanding", lang=lang),
        "",
        f"$CATEGORY: {category(src['lesson'])}",
        "",
    ]
    for q, text, general, opts in qs:
        out.append(f"// {q['id']} ({q['kind']})")
        answers = []
        for oid, label, fraction, feedback in opts:
            if q["kind"] == "race":
                mark = f"~%{_pct(fraction)}%"
            else:
                mark = "=" if fraction == 100 else "~"
            answers.append(f"\t{mark}{gift_escape(label)}#{gift_escape(feedback)}")
        out.append(f"::{gift_escape(q['id'])}::[html]{gift_escape(text)}{{")
        out += answers
        out.append(f"\t####{gift_escape(general)}")
        out.append("}")
        out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------ Moodle XML


def _text(parent: ET.Element, tag: str, content: str, fmt: str = "html") -> ET.Element:
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = content
    return el


def moodle_xml(lesson: str, lang: str, site_url: str | None = None) -> str:
    src, qs = items(lesson, lang, site_url)
    quiz_el = ET.Element("quiz")
    cat = ET.SubElement(quiz_el, "question", {"type": "category"})
    ET.SubElement(ET.SubElement(cat, "category"), "text").text = category(src["lesson"])
    for q, text, general, opts in qs:
        el = ET.SubElement(quiz_el, "question", {"type": "multichoice"})
        ET.SubElement(ET.SubElement(el, "name"), "text").text = q["id"]
        _text(el, "questiontext", text)
        _text(el, "generalfeedback", general)
        ET.SubElement(el, "defaultgrade").text = "1"
        ET.SubElement(el, "penalty").text = "0.3333333"
        ET.SubElement(el, "hidden").text = "0"
        ET.SubElement(el, "idnumber").text = q["id"]
        ET.SubElement(el, "single").text = "false" if q["kind"] == "race" else "true"
        ET.SubElement(el, "shuffleanswers").text = "true"
        ET.SubElement(el, "answernumbering").text = "abc"
        for oid, label, fraction, feedback in opts:
            a = ET.SubElement(el, "answer", {"fraction": _pct(fraction), "format": "html"})
            ET.SubElement(a, "text").text = label
            _text(a, "feedback", feedback)
    ET.indent(quiz_el)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz_el, encoding="unicode") + "\n"


def export(lesson: str, fmt: str, lang: str, site_url: str | None = None) -> str:
    if fmt == "gift":
        return gift(lesson, lang, site_url)
    if fmt == "moodle-xml":
        return moodle_xml(lesson, lang, site_url)
    raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
