"""The term base (``docs/terms.yml``): one word per concept per language, and where a variant hides.

Each entry names a concept (``en``), its preferred term in Russian and Chinese, and the variants that
are not allowed (``avoid``).  :func:`problems` searches everything a Russian or Chinese reader meets
and reports each disallowed variant with its file and line:

* pages, ``docs/ru/**/*.md`` and ``docs/zh/**/*.md`` (the glossary included, its English column aside);
* the ``lang="ru"`` / ``lang="zh"`` markdown passages of the notebook sources (``notebooks/NN-*.py``);
* the catalogs' translations (``msgstr`` only) in ``locale/<lang>/LC_MESSAGES/course.po``;
* the labs: the ``ru:`` / ``zh:`` texts of ``hints.yml`` and ``lab.yml``, and the comments and
  docstrings of ``starter.py`` (what ``course release`` ships; translated docstrings come from the
  catalog, which is searched above);
* the ``ru:`` / ``zh:`` texts of the lessons' questions (``quizzes/NN-*.yml``);
* the ``"ru": "..."`` / ``"zh": "..."`` literals in ``src/redis_course`` (words kept in code).

Code is not prose: fenced code blocks are searched only in their comments, and ``inline code``, link
targets, HTML comments and front matter not at all.  Texts keep their line numbers while being
masked, so a report points at the line to edit.  It also checks that each glossary row whose English
is a concept of the term base uses the preferred term.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths

TRANSLATED = ("ru", "zh")
_LETTER = r"A-Za-z\u00c0-\u024f\u0400-\u04ff"
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})(?P<info>.*)$")
_INLINE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK_TARGET = re.compile(r"\]\(([^)]*)\)")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ATTRS = re.compile(r"\{\s*[:#.][^}]*\}")
_TAG = re.compile(r"<[A-Za-z/][^>]*>")
_MARK = re.compile(r'^# %% \[markdown\] lang="(\w+)"')
_YAML_LANG = re.compile(r"^(?P<indent>\s*)(?P<lang>ru|zh):\s?(?P<text>.*)$")


def base_path(root: Path | None = None) -> Path:
    return Path(root or paths.ROOT) / "docs" / "terms.yml"


@dataclass
class Variant:
    concept: str
    lang: str
    written: str
    regex: re.Pattern
    preferred: str

    @property
    def ascii(self) -> bool:
        return self.written.isascii()


@dataclass
class Concept:
    en: str
    terms: dict[str, str]
    variants: list[Variant] = field(default_factory=list)
    why: str = ""


def _compile(written: str) -> re.Pattern:
    if written.startswith("re:"):
        return re.compile(written[3:], re.IGNORECASE)
    parts = []
    for word in written.split():
        stem, star = (word[:-1], True) if word.endswith("*") else (word, False)
        body = "".join("[её]" if ch in "её" else re.escape(ch) for ch in stem)
        parts.append(body + (f"[{_LETTER}]*" if star else ""))
    pattern = r"\s+".join(parts)
    if re.match(f"[{_LETTER}]", written):
        pattern = f"(?<![{_LETTER}])" + pattern
    if re.search(f"[{_LETTER}]\\*?$", written):
        pattern += f"(?![{_LETTER}])"
    return re.compile(pattern, re.IGNORECASE)


def load(root: Path | None = None) -> list[Concept]:
    import yaml

    path = base_path(root)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    concepts = []
    for i, entry in enumerate(data, 1):
        if not isinstance(entry, dict) or "en" not in entry:
            raise ValueError(f"{path.name}: entry {i} has no `en` (every concept is named in English)")
        terms = {lang: entry[lang] for lang in TRANSLATED if lang in entry}
        c = Concept(entry["en"], terms, why=entry.get("why", ""))
        for lang, written in (entry.get("avoid") or {}).items():
            for w in written:
                try:
                    c.variants.append(Variant(c.en, lang, w, _compile(w), terms.get(lang, "")))
                except re.error as exc:
                    raise ValueError(
                        f"{path.name}: the variant {w!r} of {c.en!r} is not a valid pattern: {exc}"
                    ) from None
        concepts.append(c)
    return concepts


# ----------------------------------------------------------------- what is prose, line by line


def _blank(text: str, pattern: re.Pattern, group: int = 0) -> str:
    """``text`` with each match (or its ``group``) replaced by spaces, newlines kept."""

    def repl(m: re.Match) -> str:
        s, e = m.span(group)
        inner = re.sub(r"[^\n]", " ", text[s:e])
        return text[m.start() : s] + inner + text[e : m.end()]

    return pattern.sub(repl, text)


def _prose_line(line: str) -> str:
    line = _blank(line, _INLINE)
    line = _blank(line, _LINK_TARGET, 1)
    line = _blank(line, _ATTRS)
    return _blank(line, _TAG)


def _comment_part(info: str, line: str) -> str:
    from .comments import LINE_COMMENT, _cut, language

    marker = LINE_COMMENT.get(language(info))
    if not marker:
        return ""
    code = _cut(line, marker)
    return " " * len(code) + line[len(code) :] if code != line else ""


def markdown_lines(text: str) -> list[str]:
    """The lines of a markdown text with code, link targets, HTML and front matter blanked out;
    a fenced block keeps its comments."""
    text = _blank(text, _HTML_COMMENT)
    lines = text.split("\n")
    out: list[str] = []
    fence: tuple[str, str] | None = None
    info = ""
    if lines and lines[0] == "---":
        end = next((i for i in range(1, len(lines)) if lines[i] == "---"), None)
        if end is not None:
            out = [""] * (end + 1)
            lines = lines[end + 1 :]
    for line in lines:
        m = _FENCE_OPEN.match(line)
        if fence is None and m:
            fence, info = (m.group("indent"), m.group("ticks")), m.group("info")
            out.append("")
        elif fence is not None:
            close = line.strip()
            if close.startswith(fence[1]) and not close.strip(fence[1][0]):
                fence = None
                out.append("")
            else:
                out.append(_comment_part(info, line))
        else:
            out.append(_prose_line(line))
    return out


def _glossary_lines(lines: list[str]) -> list[str]:
    """A glossary page without its second column (the English term, which is not prose of the page)."""
    out = []
    for line in lines:
        if line.startswith("|"):
            cells = line.split("|")
            if len(cells) > 3:
                cells[2] = " " * len(cells[2])
                line = "|".join(cells)
        out.append(line)
    return out


def notebook_lines(text: str) -> dict[str, list[str]]:
    """For each language, the lines of its markdown passages in a notebook source (others blank)."""
    src = text.split("\n")
    per: dict[str, list[str]] = {lang: [""] * len(src) for lang in TRANSLATED}
    lang = None
    start = 0
    for i, line in enumerate(src + ["# %%"]):
        if line.startswith("# %%"):
            if lang in per:
                body = [ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in src[start:i]]
                for j, masked in enumerate(markdown_lines("\n".join(body))):
                    per[lang][start + j] = masked
            m = _MARK.match(line)
            lang = m.group(1) if m else None
            start = i + 1
    return per


def catalog_lines(text: str) -> list[str]:
    """A .po file with everything but the translations (``msgstr``) blanked out."""
    out = []
    in_str = False
    for line in text.split("\n"):
        if line.startswith("msgstr"):
            in_str = True
        elif not line.startswith('"'):
            in_str = False
        if in_str and not line.startswith("#"):
            q = line.find('"')
            body = line[q:] if q >= 0 else ""
            body = body.replace("\\n", "  ").replace('\\"', "  ")
            body = _blank(body, re.compile(r"``[^`]*``"))
            body = _blank(body, re.compile(r"\{[^{}]*\}"))
            out.append(" " * (len(line) - len(body)) + _prose_line(body))
        else:
            out.append("")
    return out


def yaml_lines(text: str) -> dict[str, list[str]]:
    """For each language, the lines of a lab's YAML that hold its text (``ru: "..."`` and continuations)."""
    src = text.split("\n")
    per = {lang: [""] * len(src) for lang in TRANSLATED}
    lang, indent = None, -1
    for i, line in enumerate(src):
        m = _YAML_LANG.match(line)
        if m:
            lang, indent = m.group("lang"), len(m.group("indent"))
            per[lang][i] = " " * (len(line) - len(m.group("text"))) + _prose_line(m.group("text"))
        elif lang and line.strip() and len(line) - len(line.lstrip()) > indent:
            per[lang][i] = _prose_line(line)
        else:
            lang = None
    return per


def python_prose_lines(text: str) -> list[str]:
    """A Python file's comments and docstrings, the code blanked out (a starter as a student reads it)."""
    from ..labs.authoring.starter import docstrings

    src = text.split("\n")
    out = [""] * len(src)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                r, c = tok.start
                out[r - 1] = " " * c + tok.string
        for d in docstrings(text):
            for r in range(d.lineno, d.end_lineno + 1):
                out[r - 1] = _prose_line(src[r - 1])
    except (tokenize.TokenError, SyntaxError):
        return src
    return out


_PY_TEXT = re.compile(r"""["'](?P<lang>ru|zh)["']\s*:\s*(?P<q>["'])(?P<text>(?:(?!(?P=q))[^\\]|\\.)*)(?P=q)""")


def python_text_lines(text: str) -> dict[str, list[str]]:
    """For each language, the ``"ru": "..."`` / ``"zh": "..."`` string literals of a Python file (the
    words of tables and feedback kept in code, :mod:`redis_course.labs.check.texts`), the rest blanked."""
    src = text.split("\n")
    per = {lang: [""] * len(src) for lang in TRANSLATED}
    for i, line in enumerate(src):
        for m in _PY_TEXT.finditer(line):
            row = per[m.group("lang")]
            s, e = m.span("text")
            row[i] = row[i] or " " * len(line)
            row[i] = row[i][:s] + _prose_line(line[s:e]) + row[i][e:]
    return per


# ----------------------------------------------------------------- the search


def _search(lines: list[str], variants: list[Variant], label: str) -> list[str]:
    found = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        for v in variants:
            for m in v.regex.finditer(line):
                found.append(
                    f"line {n}: «{m.group(0)}» — {v.lang} says «{v.preferred}» for {v.concept} (docs/terms.yml)"
                )
    return found


def _by_lang(concepts: list[Concept]) -> dict[str, list[Variant]]:
    out: dict[str, list[Variant]] = {lang: [] for lang in TRANSLATED}
    for c in concepts:
        for v in c.variants:
            out.setdefault(v.lang, []).append(v)
    return out


def glossary_problems(concepts: list[Concept], root: Path | None = None) -> dict[str, list[str]]:
    from .glossary import _ROW

    root = Path(root or paths.ROOT)
    by_en = {c.en.split(" (")[0]: c for c in concepts}
    report: dict[str, list[str]] = {}
    for lang in TRANSLATED:
        path = root / "docs" / lang / "glossary.md"
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for m in _ROW.finditer(text):
            term, english = m.group("term").strip(), m.group("second").strip()
            c = by_en.get(english)
            if c and c.terms.get(lang) and c.terms[lang] != term:
                line = text.count("\n", 0, m.start()) + 1
                report.setdefault(f"docs/{lang}/glossary.md", []).append(
                    f"line {line}: the glossary names {english!r} «{term}», the term base «{c.terms[lang]}»"
                )
    return report


def problems(root: Path | None = None) -> dict[str, list[str]]:
    """``{"docs/ru/04-rate-limiting/index.md": ["line 12: «лимитер» — ...", ...], ...}``."""
    root = Path(root or paths.ROOT)
    if not base_path(root).exists():
        return {}
    try:
        concepts = load(root)
    except ValueError as exc:
        return {"docs/terms.yml": [str(exc)]}
    by_lang = _by_lang(concepts)
    report: dict[str, list[str]] = {}

    def add(rel: str, found: list[str]) -> None:
        if found:
            report.setdefault(rel, []).extend(found)

    for lang in TRANSLATED:
        for page in sorted((root / "docs" / lang).rglob("*.md")):
            if page.name == "notebook.md":  # rendered from the stored notebook: its source is searched
                continue
            lines = markdown_lines(page.read_text(encoding="utf-8"))
            if page.name == "glossary.md":
                lines = _glossary_lines(lines)
            add(page.relative_to(root).as_posix(), _search(lines, by_lang[lang], ""))
    for src in sorted((root / "notebooks").glob("[0-9][0-9]-*.py")):
        per = notebook_lines(src.read_text(encoding="utf-8"))
        for lang in TRANSLATED:
            add(src.relative_to(root).as_posix(), _search(per[lang], by_lang[lang], ""))
    for lang in TRANSLATED:
        po = root / "src" / "redis_course" / "l10n" / "locale" / lang / "LC_MESSAGES" / "course.po"
        if po.exists():
            add(
                f"locale/{lang}/LC_MESSAGES/course.po", _search(catalog_lines(po.read_text("utf-8")), by_lang[lang], "")
            )
    for lab in sorted((root / "labs").glob("[0-9][0-9]-*")):
        for name in ("hints.yml", "lab.yml"):
            path = lab / name
            if path.exists():
                per = yaml_lines(path.read_text(encoding="utf-8"))
                for lang in TRANSLATED:
                    add(path.relative_to(root).as_posix(), _search(per[lang], by_lang[lang], ""))
        starter = lab / "starter.py"
        if starter.exists():
            # English source: only the variants written in another script can be found in it
            lines = python_prose_lines(starter.read_text(encoding="utf-8"))
            foreign = [v for lang in TRANSLATED for v in by_lang[lang] if not v.ascii]
            add(starter.relative_to(root).as_posix(), _search(lines, foreign, ""))
    for quiz in sorted((root / "quizzes").glob("[0-9][0-9]-*.yml")):  # the lessons' questions
        per = yaml_lines(quiz.read_text(encoding="utf-8"))
        for lang in TRANSLATED:
            add(quiz.relative_to(root).as_posix(), _search(per[lang], by_lang[lang], ""))
    for py in sorted((root / "src" / "redis_course").rglob("*.py")):
        per = python_text_lines(py.read_text(encoding="utf-8"))
        for lang in TRANSLATED:
            add(py.relative_to(root).as_posix(), _search(per[lang], by_lang[lang], ""))
    for rel, found in glossary_problems(concepts, root).items():
        add(rel, found)
    return report
