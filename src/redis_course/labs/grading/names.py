"""Who a submission belongs to: the student's name exactly as their folder or zip is called.

    students = assign([("Иванов", "dir"), ("alice.zip", "zip"), ("alice", "dir"), ("alice_2", "dir")])
    [(s.name, s.folder) for s in students]
    # [('Иванов', 'Иванов'), ('alice (2)', 'alice.zip'), ('alice', 'alice'), ('alice_2', 'alice_2')]

A name is the entry's name in Unicode NFC (a zip loses its ``.zip``), bytes that are not UTF-8 and
characters that steer a terminal or the direction of text (C0 and C1 controls, DEL, line and
paragraph separators, bidi overrides and isolates) shown as U+FFFD; nothing else is changed,
whatever the alphabet.  Two entries collide when their file
names would be the same on a case-insensitive or normalising file system (``alice`` and
``alice.zip``, ``Alice`` and ``alice``, an NFC and an NFD spelling): the first in a fixed order
(folders before zips, then by code points, a
spelling already in NFC first) keeps the name, each other one gets `` (2)``, `` (3)``...,
never a name another entry has.  ``folder`` says which entry a name stands for: the entry's bytes,
escaped (:func:`escape_entry`), so that two spellings of one name (NFC and NFD) show differently.

``file`` is the stem of the student's files under RESULTS: the name with characters that no common
file system accepts (``/ \\ : * ? " < > |`` and control characters) replaced by ``_``, no trailing dot
or space, no Windows device name (``CON``, ``NUL``...), at most 200 bytes.  It can never leave its
folder.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MAX_FILE_BYTES = 200
_UNSAFE_IN_FILES = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]')
_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


#: What steers a terminal or the direction of text: never part of a name.
STEERING = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Student:
    name: str  # what grades.csv, feedback, Gradescope and JUnit show
    folder: str  # the entry in SUBMISSIONS this name stands for, its bytes escaped (escape_entry)
    file: str  # the stem of this student's files under RESULTS
    raw: str = ""  # the entry's name as the file system has it (surrogate escapes for non-UTF-8 bytes)

    def matches(self, wanted: str) -> bool:
        """``wanted`` (as typed by an instructor) names this student or their folder."""
        return wanted == self.raw or as_text(wanted) in (self.name, self.folder)


def as_text(raw: str) -> str:
    """An entry name as text: NFC, and bytes that are not UTF-8 (surrogate escapes) and characters
    that steer a terminal or the text's direction (:data:`STEERING`) as U+FFFD."""
    text = raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return STEERING.sub("\ufffd", unicodedata.normalize("NFC", text))


def escape_entry(raw: str) -> str:
    r"""The entry's name, byte for byte, as printable text that no two entries share.

    Characters that print stay as they are; ``\\`` is a backslash, ``\xNN`` a byte that is not UTF-8,
    ``\uNNNN`` (``\UNNNNNNNN``) a character that does not print (controls, format characters,
    separators other than the space) or, in a name that is not in NFC, a combining mark or a
    character NFC would change.  Every backslash starts an escape, so two different entries never
    show the same text: ``Йорик`` in NFC and in NFD (``И\u0306орик``) are told apart.
    """
    decoded = raw.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    composed = unicodedata.is_normalized("NFC", decoded)
    out = []
    for ch in decoded:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{cp - 0xDC00:02x}")
        elif ch == "\\":
            out.append("\\\\")
        elif not ch.isprintable() or (
            not composed and (unicodedata.category(ch).startswith("M") or unicodedata.normalize("NFC", ch) != ch)
        ):
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
        else:
            out.append(ch)
    return "".join(out)


def _cut(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8")[:max_bytes]
    return data.decode("utf-8", "ignore")


def file_stem(name: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A file-name stem that stands for ``name`` on Linux, macOS and Windows alike."""
    stem = _UNSAFE_IN_FILES.sub("_", name)
    stem = _cut(stem, max_bytes).rstrip(" .")
    if stem.split(".")[0].upper() in _DEVICES or stem.startswith(".") or not stem:
        stem = _cut("_" + stem, max_bytes).rstrip(" .") or "_"
    return stem


def file_key(stem: str) -> str:
    """Equal for two stems that the same file would stand for on a case-insensitive file system."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", stem).casefold())


def _variant(name: str, n: int) -> tuple[str, str]:
    if n == 1:
        return name, file_stem(name)
    suffix = f" ({n})"
    return name + suffix, file_stem(name, MAX_FILE_BYTES - len(suffix)) + suffix


def _order(cand: tuple[str, str, str, str]) -> tuple:
    name, folder, kind, raw = cand
    return (file_key(file_stem(name)), kind != "dir", name, raw != folder, raw.encode("utf-8", "surrogateescape"))


def assign(entries: list[tuple[str, str]]) -> list[Student]:
    """Names for ``(entry name, "dir" | "zip")`` pairs, one per pair in the same order (see the module)."""
    cands = []
    for raw, kind in entries:
        folder = as_text(raw)
        name = folder[:-4] if kind == "zip" and folder.lower().endswith(".zip") else folder
        cands.append((name, folder, kind, raw))
    own = {file_key(file_stem(name)) for name, *_ in cands}  # names that some entry has as it is
    taken: set[str] = set()
    students: list[Student | None] = [None] * len(cands)
    for i in sorted(range(len(cands)), key=lambda i: _order(cands[i])):
        name, folder = cands[i][:2]
        n = 1
        final, stem = _variant(name, n)
        while file_key(stem) in taken or (n > 1 and file_key(stem) in own):
            n += 1
            final, stem = _variant(name, n)
        taken.add(file_key(stem))
        students[i] = Student(final, escape_entry(cands[i][3]), stem, cands[i][3])
    return students  # type: ignore[return-value]


def sort_key(student: Student) -> tuple[str, str]:
    """The order of students in grades.csv: by name, case and accents folded, then exactly."""
    return file_key(student.name), student.name


# ------------------------------------------------------------------ the language a student reads
#: A docstring line this long or longer, found in one language's starter only, tells the language.
MIN_TELLING_LINE = 12


@lru_cache(maxsize=None)
def _telling_lines(starter: Path) -> dict[str, frozenset[str]]:
    """For each language, the docstring lines of ``starter`` as the student edition in that language
    writes them into lab.py (the catalog's translations), less the lines another language shares."""
    from ...l10n import pgettext
    from ...paths import LANGS
    from ..authoring.starter import STARTER_CONTEXT, docstrings

    try:
        texts = [d.text for d in docstrings(starter.read_text(encoding="utf-8"))]
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = {
        lang: {
            ln.strip()
            for text in texts
            for ln in pgettext(STARTER_CONTEXT, text, lang=lang).splitlines()
            if len(ln.strip()) >= MIN_TELLING_LINE
        }
        for lang in LANGS
    }
    return {
        lang: frozenset(own - set().union(*(v for k, v in lines.items() if k != lang))) for lang, own in lines.items()
    }


def edition_lang(files: dict[str, bytes], starters: dict[str, Path]) -> str | None:
    """The language of the student edition a submission was written in, or None when it cannot tell.

    The edition records its language in every ``lab.py`` it hands out: their docstrings are in that
    language (``course release --lang``).  ``files`` (lab id -> the submitted bytes) are compared line
    by line with each language's docstrings of the lab's starter (``starters``: lab id -> starter.py);
    the language with the most lines found wins, a tie or no line tells nothing.
    """
    score: dict[str, int] = {}
    for lab_id, data in files.items():
        starter = starters.get(lab_id)
        if starter is None:
            continue
        seen = {ln.strip() for ln in data.decode("utf-8", "replace").splitlines()}
        for lang, telling in _telling_lines(starter).items():
            score[lang] = score.get(lang, 0) + len(telling & seen)
    ranked = sorted(score.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] == 0 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]
