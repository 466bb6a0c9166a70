"""Escaping of text a user supplies (model names, titles, labels) for LaTeX and Markdown.

LaTeX: every special character (``\\ { } $ & # ^ _ % ~``) becomes a command that prints it.
In an English document non-ASCII characters go through latexcodec (``ü`` -> ``\\"u``) so that
pdflatex sets them; a character latexcodec cannot spell (Cyrillic, CJK) and every non-ASCII
character of a Russian or Chinese document is written as itself, and the document is then set
by xelatex with fonts that have it (:mod:`.fonts`, which refuses a character no installed font
has, naming it). The result is visible text in any context: ``\\input{/etc/passwd}`` prints as
those characters and runs nothing. Only spellings made of commands pdflatex knows with
symcalc's preamble (T1, amsmath) are used.

Every output: control characters (C0, C1, DEL, the bidirectional overrides, line and paragraph
separators) in user text never reach a terminal or a file raw; :func:`plain_text` shows each
as ``\\xNN`` / ``\\uNNNN``. Names and titles are at most :data:`TEXT_LIMIT` characters.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..algebra.limits import NAME_LIMIT as TEXT_LIMIT  # characters of a name or a title
from ..errors import SymcalcError

# C0 and C1 controls, DEL, bidirectional embeddings/overrides/isolates, line/paragraph
# separators, and lone surrogates (bytes of a command line that are not UTF-8)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
                      "\u2028\u2029\ud800-\udfff]")


def _visible(m: re.Match) -> str:
    c = ord(m[0])
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def plain_text(text: object, keep: str = "\n\t") -> str:
    """``text`` with every control character (except those in ``keep``) shown as a visible
    escape (``ESC`` -> ``\\x1b``): safe to print on a terminal or write into a text file."""
    return _CONTROL.sub(lambda m: m[0] if m[0] in keep else _visible(m), str(text))


def one_line(text: object) -> str:
    """``text`` on one line, every control character (newlines too) visibly escaped."""
    return plain_text(text, keep="")


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", '"': r"\textquotedbl{}",
}


# what latexcodec may write and pdflatex sets with symcalc's preamble (T1 fontenc, amsmath):
# text-mode accents and letters of the kernel, and in $...$ only these math commands
TEXT_COMMANDS = frozenset(
    "c v u H k r d b t l L o O i j ss SS ae AE oe OE aa AA dh DH th TH dj DJ ng NG pounds S P "
    "copyright textregistered ldots dag ddag textquotedblleft textquotedblright "
    "guillemotleft guillemotright quotesinglbase quotedblbase textendash textemdash "
    "textexclamdown textquestiondown textsterling textsection textparagraph".split())
MATH_COMMANDS = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu "
    "xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta "
    "Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega pm mp times div cdot bullet circ infty "
    "leq geq neq approx equiv sim propto partial nabla forall exists in ni cup cap subset "
    "supset subseteq supseteq wedge vee oplus otimes leftarrow rightarrow uparrow downarrow "
    "leftrightarrow Leftarrow Rightarrow Leftrightarrow ell wp Re Im aleph emptyset prime "
    "langle rangle lceil rceil lfloor rfloor surd".split())
_ACCENTS = set("\"'`^~=.")
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(.)", re.S)


def _spelling_ok(tex: str) -> bool:
    """Does latexcodec's spelling ``tex`` compile in text mode with symcalc's preamble?"""
    math = False
    for m in _TOKEN.finditer(tex):
        word, ch = m[1], m[2]
        if ch == "$":
            math = not math
        elif word is not None:
            if math and word not in MATH_COMMANDS:
                return False
            if not math and word not in TEXT_COMMANDS and word not in _ACCENTS:
                return False
        elif ch in "#%&~\\" or (ch in "^_" and not math):
            return False
    return not math


@lru_cache(maxsize=4096)
def latex_char(ch: str) -> str | None:
    """The LaTeX of one non-ASCII character, or None when pdflatex cannot set it."""
    if _CONTROL.match(ch):
        return None
    import codecs

    import latexcodec  # noqa: F401  (registers the "latex" codec)

    try:
        tex = codecs.encode(ch, "latex").decode("ascii")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None
    return "{" + tex + "}" if _spelling_ok(tex) else None  # {\"\i}code, not \"\icode


def latex_text(text: object) -> str:
    """``text`` as LaTeX that prints it literally (text mode). A character pdflatex cannot set
    (and any non-ASCII character outside English) is written as itself, for xelatex."""
    from ..i18n import current

    spell = current() == "en"
    out = []
    for ch in str(text):
        if ch in LATEX_SPECIALS:
            out.append(LATEX_SPECIALS[ch])
        elif ch == "-" and out and out[-1].endswith("-") and out[-1] in ("-", "{}-"):
            out.append("{}-")  # no en/em-dash ligature: --quantity prints as two hyphens
        elif ord(ch) < 128:
            out.append(ch if ch.isprintable() else " ")
        elif _CONTROL.match(ch):
            out.append(" ")
        else:
            out.append((latex_char(ch) if spell else None) or ch)
    return "".join(out)


def check_text(field: str, text: object, latex: bool = False, limit: int = TEXT_LIMIT) -> str:
    """Refuse a name or title longer than ``limit`` characters, and (``latex``) one holding a
    character no installed font has (:mod:`.fonts`), naming it; return the text."""
    text = str(text)
    if len(text) > limit:
        raise SymcalcError(field, f"is {len(text):,} characters long; the limit is {limit}")
    if latex:
        wide = [ch for ch in text if ord(ch) >= 128 and not _CONTROL.match(ch)
                and latex_char(ch) is None]
        if wide:
            from . import fonts

            try:
                fonts.choose("".join(wide), "en")
            except SymcalcError as err:
                raise SymcalcError(field, err.rule) from None
    return text


MARKDOWN_SPECIALS = set("\\`*_[]|$~#")


def markdown_text(text: object) -> str:
    """``text`` as Markdown that displays it literally (no markup, no HTML, no math)."""
    out = []
    for ch in plain_text(text):
        if ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "&":
            out.append("&amp;")
        elif ch in MARKDOWN_SPECIALS:
            out.append("\\" + ch)
        elif ch in "\r\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)
