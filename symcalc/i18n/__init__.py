"""Languages of symcalc's documents (``--lang en|ru|zh``): message catalogs and the current
language.

Every label, heading, caption, convention note and unit name a document shows is an English
message id; its Russian and Chinese texts live in gettext catalogs,
``symcalc/i18n/locale/<lang>/LC_MESSAGES/symcalc.po``. The ``.po`` files are compiled in memory
when first used (Babel's reader and ``.mo`` writer), so there is no build step and no ``.mo``
file to keep in step.

Two kinds of message:

* a plain id, looked up as it is (``"query projection"``);
* a pattern id with named fields in braces (``"Parameters of {model}"``): the data modules
  build the English sentence, and :func:`tr` recognises it against the pattern, takes the
  fields out and puts them into the translation. The modules that build derivations stay
  free of any rendering or language code.

The language in force is a context variable (:func:`using`), set by the renderers' entry
points; numbers are formatted for it by :mod:`symcalc.render.numbers` (CLDR data through
Babel). This module imports neither sympy nor jinja2.
"""
from __future__ import annotations

import io
import os
import re
from contextvars import ContextVar
from functools import lru_cache

from ..errors import SymcalcError

TYPE_CHECKING = False  # typing and contextlib are not imported: a quick report saves ~2 ms

if TYPE_CHECKING:
    import gettext as _gettext
    from pathlib import Path

LANGS = ("en", "ru", "zh")
LANG_NAMES = {"en": "English", "ru": "Russian", "zh": "Chinese (Simplified)"}
DOMAIN = "symcalc"
# a plain path (pathlib and gettext cost a quick report milliseconds of imports: loaded when a
# catalog is)
LOCALE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locale")

_current: ContextVar[str] = ContextVar("symcalc_lang", default="en")
# message ids asked for in a language whose catalog lacks them (tests read it)
missing: dict[str, set[str]] = {}


def check_lang(lang: str | None, field: str = "--lang") -> str:
    """``lang`` if symcalc speaks it, else one clear error naming the choices."""
    lang = "en" if lang is None else str(lang)
    if lang not in LANGS:
        raise SymcalcError(field, f"{lang!r} is not a language symcalc writes; choose from "
                                  f"{', '.join(LANGS)}")
    return lang


def current() -> str:
    """The language documents are being written in now."""
    return _current.get()


class using:  # noqa: N801 -- a context manager used like a function: ``with using("ru"):``
    """Write in ``lang`` (en, ru, zh) inside the block."""

    def __init__(self, lang: str | None):
        self.lang = check_lang(lang, "lang")

    def __enter__(self) -> None:
        self.token = _current.set(self.lang)

    def __exit__(self, *exc) -> None:
        _current.reset(self.token)


def catalog_path(lang: str) -> "Path":
    from pathlib import Path

    return Path(LOCALE_DIR) / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=None)
def translations(lang: str) -> "_gettext.NullTranslations":
    """The compiled catalog of ``lang`` (English: the ids themselves)."""
    import gettext as _gettext

    if lang == "en":
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    path = catalog_path(lang)
    with path.open("rb") as fh:
        catalog = read_po(fh, locale=lang, domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return _gettext.GNUTranslations(buf)


_FIELD = r"\{([a-z_]+)\}"


@lru_cache(maxsize=None)
def _patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    """The pattern ids of ``lang``'s catalog as anchored regular expressions (longest first)."""
    cat = getattr(translations(lang), "_catalog", {})
    out = []
    for msgid, msgstr in cat.items():
        if not isinstance(msgid, str) or not re.search(_FIELD, msgid) or not msgstr \
                or "\\" in msgid or not re.search("[A-Za-z]", re.sub(_FIELD, "", msgid)):
            continue  # LaTeX in an id, or only fields and punctuation: not a pattern
        pieces, pos = [], 0
        for m in re.finditer(_FIELD, msgid):
            pieces.append(re.escape(msgid[pos:m.start()]))
            pieces.append(f"(?P<{m[1]}>.+?)")
            pos = m.end()
        pieces.append(re.escape(msgid[pos:]))
        try:
            out.append((re.compile("".join(pieces) + r"\Z", re.S), msgid))
        except re.error:  # the same field twice: not a pattern this reader supports
            continue
    out.sort(key=lambda p: -len(p[1]))
    return tuple(out)


def gettext(message: str) -> str:
    """The translation of a plain message id in the current language."""
    lang = current()
    if lang == "en":
        return message
    cat = getattr(translations(lang), "_catalog", {})
    text = cat.get(message)
    if not text:
        missing.setdefault(lang, set()).add(message)
        return message
    return text


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for the count ``n`` (Russian has three)."""
    lang = current()
    t = translations(lang)
    if lang != "en" and (singular, 0) not in getattr(t, "_catalog", {}):
        missing.setdefault(lang, set()).add(singular)
    return t.ngettext(singular, plural, n)


def _(message: str, **fields) -> str:
    """A message of the renderers with its fields filled in (``{name}`` style)."""
    text = gettext(message)
    return text.format(**fields) if fields else text


# languages whose typesetting leaves a four-digit number whole (Russian: 4096, not 4 096)
UNSPLIT_FOUR = ("ru",)
_NUMBER = r"-?\d{1,3}(,\d{3})*(\.\d+)?|-?\d+(\.\d+)?"


def _number(text: str, lang: str) -> str:
    """A number an English sentence held (4,096 or 0.14), in ``lang``'s format (CLDR); any
    other field as it is."""
    if not re.fullmatch(_NUMBER, text):
        return text
    from decimal import Decimal, localcontext

    from babel.numbers import format_decimal

    plain = text.replace(",", "")
    digits = len(plain.partition(".")[2])
    if lang in UNSPLIT_FOUR and not digits and abs(int(plain)) < 10**4:
        return plain  # 2048, as formulas and tables write it
    pattern = "#,##0" + ("." + "0" * digits if digits else "")
    with localcontext() as ctx:  # every digit: Babel's default 28 failed from 10^28 up
        ctx.prec = max(ctx.prec, len(plain) + 10)
        return format_decimal(Decimal(plain), format=pattern, locale=lang)


# how a list of clauses (joined by "; " in English) is joined in each language
LIST_SEPARATORS = {"ru": "; ", "zh": "；"}


def _find(text: str, cat: dict, lang: str) -> str | None:
    found = cat.get(text)
    if found:
        return found
    for pattern, msgid in _patterns(lang):
        m = pattern.match(text)
        if m:
            fields = {k: (_find(v, cat, lang) or _clauses(v, cat, lang) or _number(v, lang))
                      for k, v in m.groupdict().items()}
            return cat[msgid].format(**fields)
    return _clauses(text, cat, lang)


def _clauses(text: str, cat: dict, lang: str) -> str | None:
    """A list of clauses joined by "; " (what differs, why a form does not fit), each
    clause translated on its own; None unless every clause has a translation."""
    pieces = text.split("; ")
    if len(pieces) < 2:
        return None
    done = [_find(piece, cat, lang) for piece in pieces]
    if not all(done):
        return None
    return LIST_SEPARATORS.get(lang, "; ").join(done)


def tr(text: object) -> str:
    """A sentence a data module built in English (a label, a meaning, a title, a note), in
    the current language: its own entry in the catalog, or a pattern entry it matches with
    the fields put into the translation (each field translated when it has an entry of its
    own). Text with no entry stays English (and is noted in :data:`missing`)."""
    text = str(text)
    lang = current()
    if lang == "en" or not text.strip():
        return text
    found = _find(text, getattr(translations(lang), "_catalog", {}), lang)
    if found is None:
        missing.setdefault(lang, set()).add(text)
        return text
    return found
