"""The gettext catalogs as translators work on them: extract, update, check, report.

* :func:`extract` reads every ``_()``, ``gettext``, ``ngettext``, ``pgettext``, ``npgettext`` and ``N_``
  call in ``src/``, ``notebooks/*.py`` and ``labs/`` with Babel's Python extractor, and the labs'
  test titles and starter docstrings (:func:`lab_messages`), and returns the template (the English
  messages, their plural forms, contexts and the files that use them).
* :func:`update` merges the template into ``locale/<lang>/LC_MESSAGES/course.po``: translations are
  kept, a message whose English changed gets its old translation marked *fuzzy* (shown in English
  until a translator confirms it), messages no longer in the code stay (status lists them).  The
  file is written sorted by message and without line numbers, so two runs give the same bytes and
  moving code does not rewrite the catalog.
* :func:`problems` lists what ``course i18n check`` fails on: a message missing, untranslated or
  fuzzy in one language, a translation whose ``{fields}`` differ from the English, ASCII
  punctuation closing a Chinese phrase, an entry written twice (a merge that kept both sides).
* :func:`outdated` lists what ``course i18n status`` reports: fuzzy, untranslated, obsolete.
* :func:`pofilter_problems` runs translate-toolkit's pofilter checks over each translation (its
  placeholders, brackets, whitespace, end punctuation, escapes...), minus the checks named in
  :data:`POFILTER_OFF` with the reason each does not fit.

Babel is used rather than hand-written parsing because it is what reads the catalogs at run time
(:mod:`redis_course.l10n`) and what translators' tools expect: the same rules on both ends.
"""

from __future__ import annotations

import contextlib
import io
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..l10n import DOMAIN, LOCALE_DIR, SOURCE_LANG
from ..paths import LANGS

# ``tr``: a local wrapper that fixes the language (the student README).  A call inside an f-string
# is not seen by the extractor on Python 3.11: concatenate instead.
KEYWORDS = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
    "npgettext": ((1, "c"), 2, 3),
    "N_": None,
    "tr": None,
}
COMMENT_TAGS = ("Translators:",)
SOURCES = (
    ("src/redis_course", "**/*.py"),
    ("notebooks", "[0-9][0-9]-*.py"),
    ("labs", "**/*.py"),
    ("tests/student", "*.py"),  # the student edition's own checks speak the student's language
    ("bench", "ratelimit_bench.py"),
)  # lesson 04 shows its tables in the reader's language
BABEL_LOCALE = {"ru": "ru", "zh": "zh_Hans"}
_CALL = re.compile(r"(?<![\w.])(?:_|gettext|ngettext|pgettext|npgettext|N_|tr)\(")
_CJK_THEN_ASCII = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef][,:;!?](?=\s|$)")


def template_path() -> Path:
    return paths.BUILD / "locale" / f"{DOMAIN}.pot"


def po_path(lang: str, locale_dir: Path | None = None) -> Path:
    return Path(locale_dir or LOCALE_DIR) / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def source_files(root: Path | None = None) -> list[Path]:
    root = Path(root or paths.ROOT)
    found: set[Path] = set()
    for folder, pattern in SOURCES:
        base = root / folder
        if base.is_dir():
            found.update(p for p in base.glob(pattern) if p.is_file() and "__pycache__" not in p.parts)
    return sorted(found)


def extract(root: Path | None = None):
    """The template catalog: every marked message in the course's Python sources."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_file

    root = Path(root or paths.ROOT)
    template = Catalog(project="redis-course", domain=DOMAIN, charset="utf-8", fuzzy=False)
    for path in source_files(root):
        if not _CALL.search(path.read_text(encoding="utf-8", errors="replace")):
            continue  # Babel's tokenizer is slow: read only the files that mark messages
        rel = path.relative_to(root).as_posix()
        # Babel writes a warning to stderr for an f-string anywhere in a call: as a field's value it is
        # fine (a test refuses one as the message itself), so keep the output to what matters.
        with contextlib.redirect_stderr(io.StringIO()):
            found = extract_from_file(
                "python", path, keywords=KEYWORDS, comment_tags=COMMENT_TAGS, strip_comment_tags=True
            )
        for lineno, message, comments, context in found:
            if not (message[0] if isinstance(message, tuple) else message):
                continue
            template.add(message, None, [(rel, lineno)], auto_comments=comments, context=context)
    for rel, lineno, message, context, comment in lab_messages(root):
        old = template.get(message, context=context)
        if old is not None:
            old.locations.append((rel, lineno))
        else:
            template.add(message, None, [(rel, lineno)], auto_comments=[comment], context=context)
    return template


def lab_messages(root: Path | None = None) -> list[tuple[str, int, str, str, str]]:
    """What a student reads in a lab that is not a ``_()`` call: (file, line, message, context, comment).

    * each test's title, its docstring (``labs/*/tests/**/test_*.py``), in context ``test title``;
    * the docstrings of ``labs/*/starter.py`` (the module's, each function's and class's), its comments
      and its ``your code here``, in context ``starter``: ``course release --lang`` writes ``lab.py``
      with them in that language.
    """
    from ..labs.authoring.model import TITLE_CONTEXT, test_docstrings
    from ..labs.authoring.starter import PLACEHOLDER, STARTER_CONTEXT, comments, docstrings

    root = Path(root or paths.ROOT)
    out = []
    for path in sorted((root / "labs").glob("[0-9][0-9]-*/tests/**/test_*.py")):
        rel = path.relative_to(root).as_posix()
        for _name, title, lineno in test_docstrings(path.read_text(encoding="utf-8"), lines=True):
            out.append((rel, lineno, title, TITLE_CONTEXT, "Translators: the title of a lab test, one short line."))
    for path in sorted((root / "labs").glob("[0-9][0-9]-*/starter.py")):
        rel = path.relative_to(root).as_posix()
        try:
            found = docstrings(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        for d in found:
            out.append(
                (
                    rel,
                    d.lineno,
                    d.text,
                    STARTER_CONTEXT,
                    "Translators: a docstring of the lab file students complete; keep ``code`` and "
                    "Redis commands as they are, and the line breaks.",
                )
            )
        for c in comments(path.read_text(encoding="utf-8")):
            out.append(
                (
                    rel,
                    c.lineno,
                    c.text,
                    STARTER_CONTEXT,
                    "Translators: a comment of the lab file students complete; keep code and Redis "
                    "commands as they are (each line break starts a new comment line).",
                )
            )
        if "your code here" in path.read_text(encoding="utf-8"):
            out.append(
                (
                    rel,
                    0,
                    PLACEHOLDER,
                    STARTER_CONTEXT,
                    "Translators: what a function of the lab file raises until the student writes it; "
                    "{name} is the function's name.",
                )
            )
    return out


def _header(path: Path) -> bytes:
    """The file's own header (comments and the ``msgid ""`` entry), kept as written: Babel's would add
    dates and placeholders that change on every run."""
    if not path.exists():
        return b""
    head, sep, _rest = path.read_bytes().partition(b"\n\n")
    return head + sep if b'msgid ""' in head else b""


def _write(catalog, path: Path) -> bytes:
    from babel.messages.pofile import write_po

    header = _header(path)
    buf = io.BytesIO()
    write_po(
        buf, catalog, width=0, sort_output=True, include_lineno=False, include_previous=False, omit_header=bool(header)
    )
    data = header + buf.getvalue().lstrip(b"\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return data


def read(lang: str, locale_dir: Path | None = None):
    from babel.messages.pofile import read_po

    with open(po_path(lang, locale_dir), "rb") as f:
        return read_po(f, locale=BABEL_LOCALE.get(lang, lang), domain=DOMAIN)


@dataclass
class Updated:
    lang: str
    added: list[str] = field(default_factory=list)
    fuzzy: list[str] = field(default_factory=list)
    obsolete: list[str] = field(default_factory=list)


def _key(message) -> tuple[str, str]:
    mid = message.id[0] if isinstance(message.id, (list, tuple)) else message.id
    return (message.context or "", mid)


def update(lang: str, template, locale_dir: Path | None = None, prune: bool = False) -> Updated:
    """Merge ``template`` into ``lang``'s catalog and write it (sorted, stable); ``prune``: delete the
    entries no longer in the code instead of keeping them.  An untranslated one is always deleted."""
    catalog = read(lang, locale_dir)
    before = {_key(m) for m in catalog if m.id}
    was_fuzzy = {_key(m) for m in catalog if m.id and m.fuzzy}
    catalog.update(template, no_fuzzy_matching=False, update_header_comment=False, update_creation_date=False)
    report = Updated(lang)
    for m in catalog:
        if not m.id:
            continue
        k = _key(m)
        if k not in before and not m.fuzzy:
            report.added.append(k[1])
        elif m.fuzzy and k not in was_fuzzy:
            report.fuzzy.append(k[1])
    # A message no longer in the code stays usable (another part of the course, or a branch not yet
    # merged, may still need it); `course i18n status` lists it so that somebody can delete it.
    report.obsolete = [_key(m)[1] for m in catalog.obsolete.values()]
    for m in catalog.obsolete.values():
        strs = m.string if isinstance(m.string, (list, tuple)) else [m.string]
        if not prune and all(strs):
            catalog[m.id] = m
    catalog.obsolete.clear()
    _write(catalog, po_path(lang, locale_dir))
    return report


def write_template(template, path: Path | None = None) -> Path:
    path = Path(path or template_path())
    _write(template, path)
    return path


def _fields(text: str) -> set[str] | None:
    try:
        return {
            re.split(r"[.\[!:]", name, maxsplit=1)[0]
            for _, name, _, _ in string.Formatter().parse(text)
            if name is not None
        }
    except ValueError:
        return None


def _short(text: str) -> str:
    text = text.replace("\n", "⏎")
    return repr(text if len(text) <= 70 else text[:67] + "...")


def _translation_problems(lang: str, m) -> list[str]:
    ids = list(m.id) if isinstance(m.id, (list, tuple)) else [m.id]
    strs = list(m.string) if isinstance(m.string, (list, tuple)) else [m.string]
    where = f" [{m.context}]" if m.context else ""
    name = _short(ids[0]) + where
    if not all(strs):
        return [f"untranslated: {name}"]
    if m.fuzzy:
        return [f"fuzzy (the English changed; check the translation and remove the fuzzy flag): {name}"]
    out: list[str] = []
    want = set().union(*(f for f in map(_fields, ids) if f is not None))
    plural = len(ids) > 1
    for s in strs:
        got = _fields(s)
        if got is None:
            out.append(f"unbalanced braces in the translation of {name}: {_short(s)}")
        elif got - want - ({"n"} if plural else set()) or (want - {"n"} if plural else want) - got:
            out.append(f"fields differ from the English in {name}: {sorted(want)} ≠ {sorted(got)}")
        if lang == "zh" and _CJK_THEN_ASCII.search(s):
            out.append(f"ASCII punctuation in Chinese text (use ：，；！？): {_short(s)}")
    return out


def _duplicates(path: Path) -> list[str]:
    """Entries written twice in the file (Babel keeps only one of them when reading)."""
    seen: dict[tuple[str, str], int] = {}
    ctx = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("msgctxt "):
            ctx = line[8:]
        elif line.startswith("msgid "):
            key = (ctx, line[6:])
            seen[key] = seen.get(key, 0) + 1
            ctx = ""
    return [
        f"written {n} times: msgid {mid}" + (f" (msgctxt {c})" if c else "")
        for (c, mid), n in seen.items()
        if n > 1 and mid != '""'
    ]


def problems(template=None, locale_dir: Path | None = None, root: Path | None = None) -> dict[str, list[str]]:
    """``{"locale/ru/LC_MESSAGES/course.po": [problem, ...]}`` for each catalog with a problem."""
    template = template if template is not None else extract(root)
    report: dict[str, list[str]] = {}
    for lang in LANGS:
        if lang == SOURCE_LANG:
            continue
        path = po_path(lang, locale_dir)
        label = f"locale/{lang}/LC_MESSAGES/{path.name}"
        if not path.exists():
            report[label] = ["missing catalog file"]
            continue
        catalog = read(lang, locale_dir)
        found: list[str] = _duplicates(path)
        for t in template:
            if not t.id:
                continue
            m = catalog.get(t.id if not isinstance(t.id, (list, tuple)) else t.id[0], context=t.context)
            if m is None:
                files = ", ".join(sorted({loc[0] for loc in t.locations}))
                found.append(f"missing: {_short(_key(t)[1])} (used in {files}; run `python3 run.py i18n extract`)")
            else:
                found += _translation_problems(lang, m)
        if found:
            report[label] = found
    return report


def outdated(template=None, locale_dir: Path | None = None, root: Path | None = None) -> dict[str, list[str]]:
    """Catalog entries a translator should look at: fuzzy, untranslated, no longer used."""
    template = template if template is not None else extract(root)
    wanted = {_key(t) for t in template if t.id}
    out: dict[str, list[str]] = {}
    for lang in LANGS:
        if lang == SOURCE_LANG or not po_path(lang, locale_dir).exists():
            continue
        catalog = read(lang, locale_dir)
        rows: list[str] = []
        for m in catalog:
            if not m.id:
                continue
            strs = m.string if isinstance(m.string, (list, tuple)) else [m.string]
            if m.fuzzy:
                rows.append(f"fuzzy: {_short(_key(m)[1])}")
            elif not all(strs):
                rows.append(f"untranslated: {_short(_key(m)[1])}")
            elif _key(m) not in wanted:
                rows.append(f"no longer used in the code: {_short(_key(m)[1])}")
        missing = len(wanted - {_key(m) for m in catalog if m.id})
        if missing:
            rows.append(f"{missing} message(s) not in the catalog yet (`python3 run.py i18n extract` adds them)")
        if rows:
            out[f"locale/{lang}/LC_MESSAGES/{DOMAIN}.po"] = rows
    return out


# ---------------------------------------------------------------- pofilter's checks (translate-toolkit)

# translate-toolkit's pofilter checks each translation against its English: placeholders, brackets,
# spacing, end punctuation, untranslated text, escapes, URLs...  These are the checks that do not fit
# this course, switched off by name; every other check runs (``course i18n check``).
POFILTER_OFF = {
    "accelerators": "no message has a keyboard accelerator (&File): it would only misread & and _",
    "acronyms": "Russian writes МБ for MB and translates the words of examples (ХОСТ:ПОРТ)",
    "doublequoting": 'Russian quotes with «ёлочки» and Chinese with “”, where English uses ""',
    "singlequoting": "the same for single quotes; English apostrophes (lesson's) have none in translation",
    "doublespacing": "the English docstrings put two spaces after a full stop, the translations one",
    "doublewords": "it reads across a sentence end: «… 0,8 с. С защитой …» is not a repeated word",
    "filepaths": "a /64 network or the site's /ru/ path is not a file path to keep verbatim",
    "long": "Russian is longer than English by nature",
    "short": "Chinese is shorter than English by nature",
    "musttranslatewords": "the term base (docs/terms.yml) says which words a translation must not use",
    "notranslatewords": "likewise: the term base and the {field} check cover what must stay as it is",
    "newlines": "docstrings are wrapped again to the line width in each language, so line counts differ",
    "numbers": "translations spell small numbers (семи, 十二) and write 0,8 with a decimal comma",
    "puncspacing": "lines are wrapped again in translations, and Chinese full-width punctuation takes no space",
    "sentencecount": "translators join and split sentences where their language reads better",
    "simplecaps": "Russian capitalises titles and labels differently and Chinese has no case",
    "startcaps": "word order moves a {field} or a lower-case function name to the start",
    "simpleplurals": "it only looks at English '(s)' wording, which the catalogs' plural forms replace",
    "spellcheck": "no spelling dictionaries are installed (the checks run offline)",
    "startpunc": "word order moves a {field} to the start or away from it (Regraded {student}: → {student} …)",
    "unchanged": "format-only messages ('{day}: {views}') are rightly the same in every language",
    "validchars": "needs a list of valid characters; the typography checks cover Chinese punctuation",
    "brackets": "translations add or drop parentheses as their grammar wants; Chinese uses （）",
}
POFILTER_OFF_LANG = {
    "zh": {
        "endpunc": "Chinese ends with full-width punctuation: …… for …, 。for .",
        "endwhitespace": "a list separator ', ' is '、' in Chinese, with no space after it",
        "purepunc": "the same separators: ', ' → '、', '; ' → '；'",
    },
}


def pofilter_problems(locale_dir: Path | None = None) -> dict[str, list[str]]:
    """``{"locale/ru/LC_MESSAGES/course.po": ["endpunc: ...: 'msgid'"], ...}`` from pofilter's checks."""
    try:
        from translate.filters import checks
        from translate.storage import pypo
    except ImportError:  # the site-only environment; `course i18n check` runs with everything installed
        return {}
    report: dict[str, list[str]] = {}
    for lang in LANGS:
        path = po_path(lang, locale_dir)
        if lang == SOURCE_LANG or not path.exists():
            continue
        off = {**POFILTER_OFF, **POFILTER_OFF_LANG.get(lang, {})}
        checker = checks.StandardChecker(checks.CheckerConfig(targetlanguage=lang), excludefilters=off)
        found = []
        for unit in pypo.pofile(path.read_bytes()).units:
            if unit.isheader() or unit.isobsolete() or unit.isfuzzy() or not unit.istranslated():
                continue  # fuzzy and untranslated entries are reported by :func:`problems`
            for name, failure in sorted(checker.run_filters(unit).items()):
                detail = failure.get("message", "") if isinstance(failure, dict) else str(failure)
                found.append(f"pofilter {name}: {str(detail).strip()}: {_short(str(unit.source))}")
        if found:
            report[f"locale/{lang}/LC_MESSAGES/{path.name}"] = found
    return report
