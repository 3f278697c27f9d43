"""Every string a reader meets that is not a page: one gettext catalog per language.

English is the source language: the English text is written in the code (``_("...")``) and is the
message id.  Russian and Chinese live in ``locale/<lang>/LC_MESSAGES/course.po``, the format that
translators' tools (Poedit, Weblate, Crowdin, Lokalize) read and that Babel checks.  A message with
no translation, or one marked *fuzzy* because its English changed, is shown in English and reported
by ``python3 run.py i18n check``.

    from redis_course.l10n import _, ngettext, pgettext, N_

    _("Cannot connect to Redis at {where}.", where=url)   # translated, then str.format(**fields)
    ngettext("{n} test failed", "{n} tests failed", n)   # plural forms of the reader's language
    pgettext("lab01", "first view is one")               # the same English in another context
    N_("Lost updates")                                    # marked for extraction, translated later

The language is ``lang=`` when given, else the reader's (``COURSE_LANG``, then the student edition's
language, then the locale, then English: :func:`current_lang`).  Catalogs are parsed once per process (Babel), on first use.
"""

from __future__ import annotations

import gettext as _gettext
import locale
import os
import threading
from pathlib import Path

from ..paths import LANGS

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "course"
SOURCE_LANG = "en"

_lock = threading.Lock()
_catalogs: dict[str, "_Catalog"] = {}


_edition_cache: dict[Path, tuple[float, str]] = {}


def edition_lang() -> str:
    """The language a student edition was released in (``edition.json``), or ``""``: read again only
    when the file changes, since every message asks."""
    from .. import paths

    path = paths.ROOT / "edition.json"
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return ""
    cached = _edition_cache.get(path)
    if cached and cached[0] == mtime:
        return cached[1]
    lang = paths.edition().get("lang")
    lang = lang if lang in LANGS else ""
    _edition_cache[path] = (mtime, lang)
    return lang


def current_lang() -> str:
    """The reader's language: ``COURSE_LANG``, then the language of the student edition (every command
    of a Russian edition speaks Russian), then the locale, then English."""
    lang = os.environ.get("COURSE_LANG", "").strip().lower() or edition_lang()
    if not lang:
        try:
            lang = (locale.getlocale()[0] or "").lower()
        except ValueError:
            lang = ""
    for code in LANGS:
        if lang.startswith(code):
            return code
    return SOURCE_LANG


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


class _Catalog:
    """The usable (translated, not fuzzy) messages of one language, and its plural rule."""

    def __init__(self, lang: str) -> None:
        self.messages: dict[tuple[str | None, str], str | tuple[str, ...]] = {}
        self.plural = lambda n: 0 if n == 1 else 1
        path = po_path(lang)
        if lang == SOURCE_LANG or not path.exists():
            return
        from babel.messages.pofile import read_po

        with open(path, "rb") as f:
            catalog = read_po(f, locale=lang.replace("zh", "zh_Hans"), domain=DOMAIN)
        self.plural = _gettext.c2py(catalog.plural_expr)
        for m in catalog:
            if not m.id or m.fuzzy:
                continue
            key = m.id[0] if isinstance(m.id, (list, tuple)) else m.id
            if isinstance(m.string, (list, tuple)):
                if all(m.string):
                    self.messages[(m.context, key)] = tuple(m.string)
            elif m.string:
                self.messages[(m.context, key)] = m.string


def catalog(lang: str) -> _Catalog:
    with _lock:
        if lang not in _catalogs:
            _catalogs[lang] = _Catalog(lang)
        return _catalogs[lang]


def reload() -> None:
    """Forget the parsed catalogs (after a .po file changed in this process)."""
    with _lock:
        _catalogs.clear()


def _fill(text: str, fields: dict) -> str:
    return text.format(**fields) if fields else text


def pgettext(context: str | None, message: str, /, *, lang: str | None = None, **fields: object) -> str:
    """``message`` (in ``context``) in the reader's language, filled with ``fields``."""
    found = catalog(lang or current_lang()).messages.get((context, message))
    text = found if isinstance(found, str) else message
    return _fill(text, fields)


def _(message: str, /, *, lang: str | None = None, **fields: object) -> str:
    """``message`` in the reader's language, filled with ``fields`` (``str.format``)."""
    return pgettext(None, message, lang=lang, **fields)


gettext = _


def npgettext(
    context: str | None, singular: str, plural: str, n: int, /, *, lang: str | None = None, **fields: object
) -> str:
    """The plural form for ``n`` (Russian has three, Chinese one), filled with ``n`` and ``fields``."""
    cat = catalog(lang or current_lang())
    found = cat.messages.get((context, singular))
    if isinstance(found, tuple):
        index = int(cat.plural(n))
        text = found[min(index, len(found) - 1)]
    else:
        text = singular if n == 1 else plural
    return _fill(text, {"n": n, **fields})


def ngettext(singular: str, plural: str, n: int, /, *, lang: str | None = None, **fields: object) -> str:
    return npgettext(None, singular, plural, n, lang=lang, **fields)


def N_(message: str) -> str:
    """Mark ``message`` for the catalog without translating it now (translate it where it is shown)."""
    return message


# Chinese full-width punctuation carries its own space: `余额： -5000` has one too many.
_FULL_WIDTH_END = tuple("：，；。！？、）」』】")
_FULL_WIDTH_START = tuple("：，；。！？、）」』】")


def join(*parts: object, sep: str = " ") -> str:
    """``parts`` joined as ``print`` joins them, but without the space after (or before) Chinese
    full-width punctuation: ``join("余额：", -5000)`` is ``余额：-5000``, ``join("balance:", 5)`` is
    ``balance: 5``."""
    out = ""
    for i, part in enumerate(map(str, parts)):
        if i and not (sep == " " and (out.endswith(_FULL_WIDTH_END) or part.startswith(_FULL_WIDTH_START))):
            out += sep
        out += part
    return out


def say(*parts: object, sep: str = " ", **print_args) -> None:
    """``print`` for a line that mixes translated labels and values (see :func:`join`)."""
    print(join(*parts, sep=sep), **print_args)
