"""Translation parity of the question sources, checked by ``course i18n check`` like the pages.

Ids, commands, replies and answers are written once, so the languages cannot disagree on them;
what is checked is the prose of each question in each language:

* every text exists in en, ru and zh, and is not empty (:func:`redis_course.quiz.validate`);
* the inline code of a text (```INCR```, ```SET views 0```) is the same in the three languages:
  a translation translates the words around the code and nothing else;
* a Russian text is written in Cyrillic and a Chinese one in Chinese characters (not left in English);
* the glossary's term is used: where the English text uses a glossary term, the Chinese text has the
  Chinese term and the Russian text the Russian one (the stems of its words, Russian declines them);
* numbers are grouped as the pages group them (:mod:`redis_course.i18n.typography`).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml

from ..i18n import glossary, typography
from .. import paths
from . import sources, validate

_CODE = re.compile(r"`([^`]+)`")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_HAN = re.compile(r"[\u3400-\u9fff]")


def _texts(q: dict):
    """(where, {lang: text}) for every translated text of a question."""
    yield "prompt", q.get("prompt")
    yield "explain", q.get("explain")
    for o in q.get("options") or []:
        if isinstance(o, dict) and "text" in o:
            yield f"options.{o.get('id')}.text", o["text"]
    for oid, w in (q.get("wrong") or {}).items():
        if isinstance(w, dict):
            yield f"wrong.{oid}.misconception", w.get("misconception")
            yield f"wrong.{oid}.explain", w.get("explain")


def _terms() -> list[tuple[str, str, str]]:
    """(English, Russian, Chinese) for every glossary row."""
    ru = {en.lower(): term for term, en in glossary.rows("ru")}
    zh = {en.lower(): term for term, en in glossary.rows("zh")}
    out = []
    for en in sorted(set(ru) & set(zh)):
        plain = re.sub(r"\s*\(.*?\)", "", en).strip()
        out.append((plain, re.sub(r"\s*\(.*?\)", "", ru[en]).strip(), re.sub(r"（.*?）|\(.*?\)", "", zh[en]).strip()))
    return out


def _stems(ru_term: str) -> list[str]:
    return [w[: max(4, len(w) - 3)].lower() for w in re.split(r"[\s-]+", ru_term) if len(w) > 2]


def _english_has(term: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(term)}(?:s|es)?(?![\w-])", _CODE.sub(" ", text), re.IGNORECASE) is not None


def text_problems(where: str, value: dict, terms: list[tuple[str, str, str]]) -> list[str]:
    out: list[str] = []
    en = value["en"]
    code = Counter(_CODE.findall(en))
    for lang in paths.LANGS[1:]:
        tr = value[lang]
        got = Counter(_CODE.findall(tr))
        if got != code:
            missing, extra = sorted((code - got).elements()), sorted((got - code).elements())
            out.append(
                f"{where}.{lang}: inline code differs from English"
                + (f"; missing {missing}" if missing else "")
                + (f"; not in English {extra}" if extra else "")
            )
        words = _CODE.sub("", tr)
        script = _CYRILLIC if lang == "ru" else _HAN
        if _CODE.sub("", en).strip(" .,:;") and not script.search(words):
            out.append(f"{where}.{lang}: not translated (no {'Cyrillic' if lang == 'ru' else 'Chinese'} text)")
        for line, n in typography.badly_grouped(tr, lang):
            out.append(f"{where}.{lang}: number {n!r} is grouped the wrong way for {lang}")
    for en_term, ru_term, zh_term in terms:
        if not _english_has(en_term, en):
            continue
        if zh_term and zh_term not in value["zh"]:
            out.append(f"{where}.zh: uses {en_term!r} in English but not the glossary's {zh_term!r}")
        low = value["ru"].lower()
        if ru_term and not all(s in low for s in _stems(ru_term)):
            out.append(f"{where}.ru: uses {en_term!r} in English but not the glossary's {ru_term!r}")
    return out


def problems(root: Path | None = None) -> dict[str, list[str]]:
    """``{"quizzes/01-incr.yml": [problem, ...]}`` for every source with a problem."""
    terms = _terms()
    report: dict[str, list[str]] = {}
    for path in sources(root):
        rel = f"{path.parent.name}/{path.name}"
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            report[rel] = [f"cannot be read as YAML: {str(exc).splitlines()[0]}"]
            continue
        found = validate(data, path.stem)
        if not found:
            for q in data["questions"]:
                for where, value in _texts(q):
                    found += text_problems(f"{q['id']}.{where}", value, terms)
        if found:
            report[rel] = found
    return report
