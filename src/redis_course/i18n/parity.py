"""Translation parity: every page in three languages with the same skeleton.

For each page under ``docs/en`` (hand-written pages; generated ``notebook.md`` pages are skipped):

* the page exists in ``docs/ru`` and ``docs/zh`` (or is a deliberate fallback that shows the
  "not yet translated" note: front matter ``translation: pending``);
* the explicit heading ids (``## Атомарность { #atomicity }``) are the same, in the same order;
* fenced code blocks are byte-identical, in the same order, once their comments are taken out
  (:mod:`.comments`): a translation translates the comments and nothing else.  A program's output
  (a ``text`` block that is not a redis-cli session) is the one exception: it may show the
  translation of each message of the course's catalog the English block shows, as the program prints
  it in that language (:func:`output_matches`), and differ in nothing else but the spaces that align
  its columns; a redis-cli session, like code, stays byte-identical;
* links and images point to the same targets, in the same order;
* the admonition and content-tab structure is the same;
* the translation's typography holds (:mod:`.typography`): no line break inside a Chinese paragraph,
  numbers grouped one way (non-breaking spaces in Russian, commas in Chinese).

Notebook language cells (:mod:`.nbcells`) and the gettext catalogs of tool messages
(:mod:`.catalogs`) are checked by ``course i18n check`` too, and reported by ``course i18n status``;
so is the term base (:mod:`.terms`): no disallowed variant of a term anywhere a reader meets it;
so are the lessons' question sources (``quizzes/*.yml``, :mod:`redis_course.quiz.parity`) by ``check``,
which the command passes in: the quiz package uses this one's glossary and typography, so this one
does not import it.

Outdated translations: a translated page records in its front matter the hash of the English page
it was translated from (``source: 1a2b3c4d5e6f``).  ``course i18n status`` lists pages whose English
original has changed since; ``course i18n stamp docs/ru/...`` records that a page is up to date.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from typing import Callable
from pathlib import Path

from . import comments, typography
from .. import paths
from ..paths import LANGS

GENERATED = {"notebook.md"}
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)(?P=ticks)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.MULTILINE)
_HEADING_ID = re.compile(r"\{[^}]*#([A-Za-z0-9_\-:.]+)[^}]*\}\s*$")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<(https?://[^>]+)>")
_ADMONITION = re.compile(r"^([ \t]*)(!!!|\?\?\?\+?)\s*([A-Za-z\-]+)", re.MULTILINE)
_TAB = re.compile(r"^([ \t]*)===\+?\s", re.MULTILINE)
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


@dataclass
class Skeleton:
    headings: list[str] = field(default_factory=list)
    missing_ids: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    bodies: list[tuple[str, str]] = field(default_factory=list)  # (info, body) of each code block
    links: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    front: dict = field(default_factory=dict)


def front_matter(text: str) -> dict:
    import yaml

    m = _FRONT.match(text)
    return (yaml.safe_load(m.group(1)) or {}) if m else {}


def skeleton(text: str) -> Skeleton:
    sk = Skeleton(front=front_matter(text))
    body = _FRONT.sub("", text, count=1)
    for m in _FENCE.finditer(body):
        sk.code.append(m.group("info").strip() + "\n" + comments.strip(m.group("info"), m.group("body")))
        sk.bodies.append((m.group("info").strip(), m.group("body")))
    prose = _FENCE.sub("", body)  # headings, links and blocks outside code only
    for level, title in _HEADING.findall(prose):
        m = _HEADING_ID.search(title)
        if m:
            sk.headings.append(f"{level} #{m.group(1)}")
        else:
            sk.missing_ids.append(f"{level} {title}")
    sk.links = _LINK.findall(prose) + _AUTOLINK.findall(prose)
    sk.blocks = [f"{ind}{kind} {typ}" for ind, kind, typ in _ADMONITION.findall(prose)]
    sk.blocks += [f"{ind}===" for ind in _TAB.findall(prose)]
    return sk


def source_hash(text: str) -> str:
    """Hash of an English page without its front matter (what a translation was made from)."""
    return hashlib.sha256(_FRONT.sub("", text, count=1).encode("utf-8")).hexdigest()[:12]


def pages(lang: str = "en") -> list[Path]:
    root = paths.DOCS / lang
    return sorted(p.relative_to(root) for p in root.rglob("*.md") if p.name not in GENERATED)


def _diff_list(what: str, a: list[str], b: list[str]) -> list[str]:
    if a == b:
        return []
    out = [f"{what} differ ({len(a)} in en, {len(b)} here)"]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            x1, y1 = x.replace("\n", "⏎")[:80], y.replace("\n", "⏎")[:80]
            out.append(f"  first difference at #{i + 1}: en {x1!r} ≠ {y1!r}")
            break
    else:
        longer, name = (a, "en") if len(a) > len(b) else (b, "here")
        out.append(f"  extra in {name}: {longer[min(len(a), len(b))].replace(chr(10), '⏎')[:80]!r}")
    return out


# ------------------------------------------------------------------ program output in the reader's language

_SESSION = re.compile(r"^\s*(?:redis(?:\(TX\))?|[\w.\-]+:\d+)> ", re.MULTILINE)  # redis> / 127.0.0.1:7000>
_FIELD = re.compile(r"\{(\w*)(?:![rsa])?(?::[^{}]*)?\}")
_WORD = re.compile(r"[A-Za-z]")


def is_output(info: str, body: str) -> bool:
    """A block of a program's output: ``text`` (or no language) and no redis-cli prompt in it."""
    return comments.language(info) in ("text", "") and not _SESSION.search(body)


def _message_pattern(msgid: str) -> tuple[re.Pattern, list[str], list[str]] | None:
    """A regex for ``msgid`` as printed (each ``{field}`` one run of non-spaces), its literal parts and
    the field of each group (``g0``, ``g1``, ...)."""
    literals, pattern, fields, pos = [], [], [], 0
    for m in _FIELD.finditer(msgid):
        literals.append(msgid[pos : m.start()])
        pattern.append(re.escape(msgid[pos : m.start()]))
        name = m.group(1) or str(sum(1 for f in fields if f.isdigit()))
        if name in fields:
            pattern.append(f"(?P=g{fields.index(name)})")
        else:
            pattern.append(f"(?P<g{len(fields)}>\\S+)")
            fields.append(name)
        pos = m.end()
    literals.append(msgid[pos:])
    pattern.append(re.escape(msgid[pos:]))
    if not any(_WORD.search(lit) for lit in literals) or "\n" in msgid:
        return None  # a message of punctuation and fields alone would match anywhere
    body = "".join(pattern)
    if re.match(r"[\w{]", msgid[:1]):
        body = r"(?<![\w-])" + body  # whole words: not the "limiter" of pyrate-limiter
    if re.search(r"[\w}]$", msgid):
        body += r"(?![\w-])"
    return re.compile(body), [lit for lit in literals if lit], fields


def _filled(translation: str, values: dict[str, str]) -> str:
    """``translation`` with each field replaced by the text the English line shows for it."""
    count = iter(range(1000))

    def one(m: re.Match) -> str:
        name = m.group(1) or str(next(count))
        return values.get(name, m.group(0))

    text = translation.replace("{{", "\0").replace("}}", "\1")
    return _FIELD.sub(one, text).replace("\0", "{").replace("\1", "}")


def _flex_match(text: str, line: str, j: int) -> int | None:
    """Where ``text`` ends when it starts at ``line[j]``, each run of spaces in it any run of spaces."""
    for part in re.split(r"([ \t]+)", text):
        if not part:
            continue
        if part.isspace():
            k = j
            while k < len(line) and line[k] in " \t":
                k += 1
            if k == j:
                return None
            j = k
        elif line.startswith(part, j):
            j += len(part)
        else:
            return None
    return j


_compiled: dict[tuple[str, int], list] = {}


def _translations(lang: str, block: str) -> list[tuple[re.Pattern, list[str], list[str]]]:
    """The catalog's messages the English ``block`` may show, longest first, each with its translations."""
    from .. import l10n

    cat = l10n.catalog(lang)
    if (lang, id(cat)) not in _compiled:
        entries = []
        for (_context, msgid), translated in cat.messages.items():
            compiled = _message_pattern(msgid)
            if compiled is not None:
                forms = list(translated) if isinstance(translated, tuple) else [translated]
                entries.append((len(msgid), compiled, forms))
        entries.sort(key=lambda item: -item[0])
        for stale in [k for k in _compiled if k[0] == lang]:
            del _compiled[stale]
        _compiled[(lang, id(cat))] = entries
    return [
        (pattern, fields, forms)
        for _n, (pattern, literals, fields), forms in _compiled[(lang, id(cat))]
        if all(lit in block for lit in literals)
    ]


def output_matches(en_body: str, tr_body: str, lang: str) -> bool:
    """Whether ``tr_body`` is the output block ``en_body`` as the program prints it in ``lang``: each
    catalog message of a line shown in English or in its translation (with the same values), the rest
    of the line unchanged but for the width of its runs of spaces (columns align to other words, and
    Chinese full-width punctuation takes no space after it)."""
    import functools

    en_lines, tr_lines = en_body.rstrip().split("\n"), tr_body.rstrip().split("\n")
    if len(en_lines) != len(tr_lines):
        return False
    messages = _translations(lang, en_body)
    for en, tr in zip(en_lines, (t.rstrip() for t in tr_lines)):
        en = en.rstrip()
        spans = {}  # en position -> [(end, [texts the reader may see]), ...]
        for i in range(len(en)):
            for pattern, fields, forms in messages:
                m = pattern.match(en, i)
                if m and m.end() > i:
                    values = {name: m.group(f"g{k}") for k, name in enumerate(fields)}
                    spans.setdefault(i, []).append((m.end(), [m.group(0)] + [_filled(f, values) for f in forms]))

        @functools.lru_cache(maxsize=None)
        def fits(i: int, j: int, loose: bool) -> bool:
            if loose or i in spans:  # spaces next to a message are the reader's language's own
                while i < len(en) and en[i] in " \t":
                    i += 1
                while j < len(tr) and tr[j] in " \t":
                    j += 1
            if i == len(en):
                return j == len(tr)
            for end, texts in spans.get(i, ()):
                for text in texts:
                    k = _flex_match(text, tr, j)
                    if k is not None and fits(end, k, True):
                        return True
            if en[i] in " \t":
                i2, j2 = i, j
                while i2 < len(en) and en[i2] in " \t":
                    i2 += 1
                while j2 < len(tr) and tr[j2] in " \t":
                    j2 += 1
                return j2 > j and fits(i2, j2, False) or (i2 in spans and fits(i2, j2, False))
            return j < len(tr) and en[i] == tr[j] and fits(i + 1, j + 1, False)

        if not fits(0, 0, False):
            return False
    return True


def _diff_code(en: Skeleton, tr: Skeleton, lang: str) -> list[str]:
    """``code blocks differ`` unless each block is the English one, or (program output) the English
    one as the program prints it in ``lang``."""
    shown = list(tr.code)
    for k, (a, b, ea, eb) in enumerate(zip(en.code, tr.code, en.bodies, tr.bodies)):
        if a != b and is_output(*ea) and ea[0] == eb[0] and output_matches(ea[1], eb[1], lang):
            shown[k] = a  # a localized transcript of the same output
    return _diff_list("code blocks", en.code, shown)


def check_page(rel: Path, lang: str) -> list[str]:
    """Problems of the ``lang`` version of page ``rel`` against English; [] when in parity."""
    en_text = (paths.DOCS / "en" / rel).read_text(encoding="utf-8")
    path = paths.DOCS / lang / rel
    if not path.exists():
        return [
            f"missing: docs/{lang}/{rel} (translate docs/en/{rel}, or add it with "
            f"front matter `translation: pending` and a visible not-yet-translated note)"
        ]
    text = path.read_text(encoding="utf-8")
    en, tr = skeleton(en_text), skeleton(text)
    problems: list[str] = []
    if tr.front.get("translation") == "pending":
        if "course-untranslated" not in text:
            problems.append(
                "marked `translation: pending` but shows no not-yet-translated note "
                "(a block with class course-untranslated)"
            )
        return problems
    for h in en.missing_ids:
        problems.append(f"heading without an explicit id in docs/en/{rel}: {h!r} (add {{ #some-id }})")
    for h in tr.missing_ids:
        problems.append(f"heading without an explicit id: {h!r} (use the id of the English heading)")
    problems += _diff_list("heading ids", en.headings, tr.headings)
    problems += _diff_code(en, tr, lang)
    problems += _diff_list("links and images", en.links, tr.links)
    problems += _diff_list("admonitions and tabs", en.blocks, tr.blocks)
    problems += typography.problems(text, lang)
    return problems


def check_all() -> dict[str, list[str]]:
    """``{"docs/ru/01-incr/index.md": [problem, ...], ...}`` for every page with a problem."""
    report: dict[str, list[str]] = {}
    en_pages = set(pages("en"))
    for lang in LANGS[1:]:
        for rel in sorted(en_pages):
            problems = check_page(rel, lang)
            if problems:
                report[f"docs/{lang}/{rel}"] = problems
        for rel in sorted(set(pages(lang)) - en_pages):
            report[f"docs/{lang}/{rel}"] = [f"no English original docs/en/{rel}"]
    return report


def outdated() -> dict[str, str]:
    """Translated pages whose English original changed since they were stamped."""
    out: dict[str, str] = {}
    for rel in pages("en"):
        want = source_hash((paths.DOCS / "en" / rel).read_text(encoding="utf-8"))
        for lang in LANGS[1:]:
            path = paths.DOCS / lang / rel
            if not path.exists():
                continue
            got = front_matter(path.read_text(encoding="utf-8")).get("source")
            if str(got) != want:
                out[f"docs/{lang}/{rel}"] = (
                    "never stamped" if got is None else f"English page changed (translated from {got}, now {want})"
                )
    return out


def stamp(page: Path) -> None:
    """Record in the translated page's front matter the hash of its current English original."""
    page = page.resolve()
    lang_dir = next(paths.DOCS / lang for lang in LANGS[1:] if (paths.DOCS / lang) in page.parents)
    rel = page.relative_to(lang_dir)
    want = source_hash((paths.DOCS / "en" / rel).read_text(encoding="utf-8"))
    text = page.read_text(encoding="utf-8")
    m = _FRONT.match(text)
    if m:
        lines = [ln for ln in m.group(1).splitlines() if not ln.startswith("source:")]
        lines.append(f"source: {want}")
        text = "---\n" + "\n".join(lines) + "\n---\n" + text[m.end() :]
    else:
        text = f"---\nsource: {want}\n---\n\n" + text
    page.write_text(text, encoding="utf-8")


def main_check(*more: Callable[[], dict[str, list[str]]]) -> int:
    """Print every problem; 1 if there is one.  ``more``: further checks, each ``{where: [problem, ...]}``
    (``course i18n check`` adds the question sources', :func:`redis_course.quiz.parity.problems`)."""
    from . import catalogs, nbcells, terms

    report = check_all()
    for page, problems in report.items():
        print(page)
        for p in problems:
            print(f"  - {p}")
    other = {**nbcells.check_all(), **catalogs.problems()}
    for check in more:
        other.update(check())
    for where, problems in [*catalogs.pofilter_problems().items(), *terms.problems().items()]:
        other.setdefault(where, []).extend(problems)
    for where, problems in other.items():
        print(where)
        for p in problems:
            print(f"  - {p}")
    stale = outdated()
    if stale:
        print(
            f"\n{len(stale)} translated page(s) older than their English original "
            f"(`python3 run.py i18n status` lists them)."
        )
    n = len(pages("en"))
    print(
        f"\nparity: {n} page(s) × {len(LANGS)} languages, {len(report)} with problems; "
        f"notebook language cells, string catalogs, terms and question sources: {len(other)} file(s) with problems"
    )
    return 1 if report or other else 0


def main_status() -> int:
    from . import catalogs, nbcells

    stale = outdated()
    for page, why in stale.items():
        print(f"{page}: {why}")
    if not stale:
        print("every translation is up to date with its English page")
    cells = nbcells.outdated_all()
    for src, rows in cells.items():
        print(f"{src}: {len(rows)} translated passage(s) to look at")
        for row in rows:
            print(f"  - {row}")
    if not cells:
        print("every notebook passage is up to date with its English")
    entries = catalogs.outdated()
    for po, rows in entries.items():
        print(f"{po}: {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} to look at")
        for row in rows:
            print(f"  - {row}")
    if not entries:
        print("every catalog entry is translated and up to date with its English")
    return 0


def main_extract(prune: bool = False) -> int:
    from . import catalogs

    template = catalogs.extract()
    path = catalogs.write_template(template)
    print(f"{sum(1 for m in template if m.id)} message(s) extracted into {path.relative_to(paths.ROOT)}")
    for lang in LANGS[1:]:
        up = catalogs.update(lang, template, prune=prune)
        print(
            f"locale/{lang}: {len(up.added)} new, {len(up.fuzzy)} newly fuzzy, {len(up.obsolete)} no longer used"
            + (" (deleted)" if prune else "")
        )
        for what, items in (("fuzzy", up.fuzzy), ("no longer used", up.obsolete)):
            for item in items:
                print(f"  {what}: {item[:80]!r}")
    return 0


def main_stamp(pages_: list[str]) -> int:
    if not pages_:
        print("name the translated pages to stamp, e.g. docs/ru/01-incr/index.md", file=sys.stderr)
        return 2
    from . import nbcells

    for p in pages_:
        if Path(p).suffix == ".py":  # a notebook source: its Russian and Chinese passages
            print(f"stamped {p}: {nbcells.stamp_cells(Path(p))} passage(s) now match their English")
            continue
        problem = stamp_problem(Path(p))
        if problem:
            print(problem, file=sys.stderr)
            return 2
        stamp(Path(p))
        print(f"stamped {p}")
    return 0


def stamp_problem(page: Path) -> str | None:
    """Why ``page`` cannot be stamped, in one sentence; None when it can."""
    page = page.resolve()
    others = " or ".join(f"docs/{lang}/" for lang in LANGS[1:])
    if (paths.DOCS / LANGS[0]) in page.parents:
        rel = page.relative_to(paths.DOCS / LANGS[0])
        return (
            f"{page.name} under docs/{LANGS[0]}/ is an original, not a translation: stamp its translations "
            f"({', '.join(f'docs/{lang}/{rel}' for lang in LANGS[1:])}) once they say what it says"
        )
    lang_dir = next((paths.DOCS / lang for lang in LANGS[1:] if (paths.DOCS / lang) in page.parents), None)
    if lang_dir is None:
        return f"{page} is not a translated page: name a page under {others}"
    if not page.is_file():
        return f"{page} does not exist"
    if not (paths.DOCS / LANGS[0] / page.relative_to(lang_dir)).is_file():
        return f"{page.relative_to(paths.ROOT)} has no English original at docs/{LANGS[0]}/{page.relative_to(lang_dir)}"
    return None
