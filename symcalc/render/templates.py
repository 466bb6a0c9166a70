"""jinja2 templates: the package's own (``symcalc/templates`` in an installed wheel, the
repository's top-level ``templates/`` in a development checkout) and a user's (``--template
FILE``, run in jinja2's sandbox).

Markdown templates use jinja2's usual delimiters. LaTeX templates (``*.tex.j2``) use
delimiters that never clash with TeX's braces and percent signs::

    ((* for x in xs *)) ... ((* endfor *))     statements
    ((( x )))                                  values
    ((= a comment =))

Templates never compute: every value they show is prepared by the renderer. Their words are
message ids, ``_("The models")`` (fields in braces: ``_("context {n}", n=...)``), shown in the
language in force (:mod:`symcalc.i18n`; jinja2's i18n extension gives ``{% trans %}`` blocks
the same catalogs); ``tests/test_i18n.py`` fails when one has no translation.
"""
from __future__ import annotations

import re
import signal
import sys
import threading
import traceback
from functools import lru_cache
from importlib import resources
from pathlib import Path

from decimal import Decimal
from fractions import Fraction
from string import Formatter

import jinja2
import jinja2.sandbox
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter

from .. import i18n
from ..errors import SymcalcError

TEX_SYNTAX = dict(block_start_string="((*", block_end_string="*))",
                  variable_start_string="(((", variable_end_string=")))",
                  comment_start_string="((=", comment_end_string="=))",
                  line_statement_prefix=None, line_comment_prefix=None)
COMMON = dict(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
              undefined=jinja2.StrictUndefined, autoescape=False)


def template_dir() -> Path:
    """Where the package's templates are: inside the installed package, else the checkout's
    top-level templates/ (editable install)."""
    packaged = resources.files("symcalc").joinpath("templates")
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if checkout.is_dir():
        return checkout
    raise SymcalcError("templates", "cannot find symcalc's templates (broken install?)")


def _syntax(name: str) -> dict:
    return TEX_SYNTAX if name.endswith(".tex.j2") else {}


def with_messages(env: jinja2.Environment) -> jinja2.Environment:
    """``_``, ``gettext`` and ``ngettext`` (and ``{% trans %}``) read symcalc's catalogs in the
    language in force."""
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(i18n.gettext, i18n.ngettext, newstyle=False)
    env.globals["_"] = i18n._
    return env


@lru_cache(maxsize=None)
def environment(tex: bool) -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(template_dir()))
    return with_messages(jinja2.Environment(loader=loader, **COMMON, **(TEX_SYNTAX if tex else {})))


def render(name: str, **data) -> str:
    """Render the package template ``name`` (e.g. ``derivation.md.j2``) with ``data``."""
    return environment(name.endswith(".tex.j2")).get_template(name).render(**data)


# user templates: limits (stated in docs/security.md)
STRING_LIMIT = 1_000_000  # characters (or items) of any one value a template builds
WORK_LIMIT = 50_000_000  # characters (or items) of all the values it builds, together
OUTPUT_LIMIT = 10_000_000  # characters of rendered output
TIME_LIMIT = 10.0  # seconds of rendering (enforced in the main thread, with SIGALRM)
INCLUDE_DEPTH = 20  # templates nested by include / import / extends
_PADDING = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "format",
                      "format_map", "replace", "join"})
_WIDTH = re.compile(r"(\d{7,})")  # a width or precision of a million or more in a format


class TemplateLimit(Exception):
    """A user template went over a stated limit (the message says which); ``where`` is the
    (template, line) when the error lies in reading a file, not in running it."""

    def __init__(self, message: str, where: tuple[str, int] | None = None):
        super().__init__(message)
        self.where = where


class _FolderLoader(jinja2.FileSystemLoader):
    """The user's template folder, following no link out of it, reading UTF-8 only."""

    def __init__(self, folder: Path, seen: dict):
        super().__init__(str(folder), encoding="utf-8", followlinks=False)
        self.root = folder
        self.seen = seen  # real file name -> name shown in errors

    def get_source(self, environment, template):
        pieces = template.replace("\\", "/").split("/")
        if ".." in pieces:
            raise jinja2.TemplateNotFound(template)
        path = self.root.joinpath(*[p for p in pieces if p not in ("", ".")]).resolve()
        try:
            path.relative_to(self.root)
        except ValueError:
            raise TemplateLimit(f"{template!r} links out of the template folder "
                                "(links out are not followed)") from None
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        try:
            raw = path.read_bytes()
            source = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw[:err.start].count(b"\n") + 1
            raise TemplateLimit(f"is not UTF-8 text (byte {err.start}: {raw[err.start]:#04x})",
                                (self.seen.get(str(path), template), line)) from None
        except OSError as err:
            raise TemplateLimit(f"cannot read {template!r} ({err.strerror or err})") from None
        self.seen.setdefault(str(path), template)
        return source, str(path), lambda: True


def _size(x) -> int:
    return len(x) if isinstance(x, (str, bytes, list, tuple, dict, set, frozenset)) else 0


class _BoundedGenerator(CodeGenerator):
    """``a ~ b`` goes through the environment's size check as other operators do."""

    def visit_Concat(self, node, frame) -> None:
        self.write("environment.checked(")
        super().visit_Concat(node, frame)
        self.write(")")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """jinja2's sandbox (no Python internals, no mutation of lists and dicts, ranges of at
    most 100,000 items) with bounded values: every value built by ``* ** + ~``, a string
    method or a filter is at most :data:`STRING_LIMIT` long, all of them together at most
    :data:`WORK_LIMIT`; integer powers stay under 10,000 bits; includes nest at most
    :data:`INCLUDE_DEPTH` deep."""

    code_generator_class = _BoundedGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

    def __init__(self, seen: dict, **options):
        super().__init__(**options)
        self.seen = seen
        self.work = 0
        self.filters = {name: self._bounded_filter(name, f) for name, f in self.filters.items()}

    def checked(self, value):
        n = _size(value)
        if n > STRING_LIMIT:
            raise TemplateLimit(f"builds a value of {n:,} characters or items; "
                                f"the limit is {STRING_LIMIT:,}")
        self.work += n
        if self.work > WORK_LIMIT:
            raise TemplateLimit(f"builds more than {WORK_LIMIT:,} characters or items in all")
        return value

    def call_binop(self, context, operator, left, right):
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if _size(seq) and isinstance(n, int) and _size(seq) * max(n, 0) > STRING_LIMIT:
                    raise TemplateLimit(f"builds a value of {_size(seq) * n:,} characters or "
                                        f"items; the limit is {STRING_LIMIT:,}")
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            if abs(left) > 1 and right * max(abs(left), 2).bit_length() > 10_000:
                raise TemplateLimit("computes a power of more than 10,000 bits")
        if operator == "%" and isinstance(left, str) and _WIDTH.search(left):
            raise TemplateLimit("formats with a width of a million or more")
        if operator == "+" and _size(left) + _size(right) > STRING_LIMIT:
            raise TemplateLimit(f"builds a value of {_size(left) + _size(right):,} characters "
                                f"or items; the limit is {STRING_LIMIT:,}")
        return self.checked(super().call_binop(context, operator, left, right))

    def call(self, __self, __obj, *args, **kwargs):
        name = getattr(__obj, "__name__", "")
        owner = getattr(__obj, "__self__", None)  # str.format comes wrapped by the sandbox
        owner = owner if owner is not None else getattr(getattr(__obj, "__wrapped__", None),
                                                        "__self__", None)
        if name in _PADDING and isinstance(owner, str):
            if any(isinstance(a, int) and a > STRING_LIMIT for a in (*args, *kwargs.values())):
                raise TemplateLimit(f"asks {name}() for more than {STRING_LIMIT:,} characters")
            if name in ("format", "format_map") and _WIDTH.search(owner):
                raise TemplateLimit("formats with a width of a million or more")
            if name == "replace" and len(args) >= 2 and isinstance(args[1], str):
                grow = (len(owner) + 1 if args[0] == "" else owner.count(str(args[0]))) * len(args[1])
                if grow > STRING_LIMIT:
                    raise TemplateLimit(f"replace() would build more than {STRING_LIMIT:,} characters")
            if name == "join":
                items = list(args[0]) if args else []
                total = sum(len(str(i)) for i in items) + len(owner) * len(items)
                if total > STRING_LIMIT:
                    raise TemplateLimit(f"join() would build {total:,} characters; the limit "
                                        f"is {STRING_LIMIT:,}")
                args = (items, *args[1:])
        return self.checked(super().call(__self, __obj, *args, **kwargs))

    def _bounded_filter(self, name, f):
        from jinja2.utils import _PassArg

        skip = 1 if _PassArg.from_obj(f) else 0  # the context/environment argument

        def bounded(*args, **kwargs):
            value, rest = (args[skip] if len(args) > skip else None), args[skip + 1:]
            if name in ("center", "indent", "wordwrap", "truncate") and any(
                    (isinstance(a, int) and a > STRING_LIMIT) or _size(a) > STRING_LIMIT
                    for a in (*rest, *kwargs.values())):
                raise TemplateLimit(f"asks the {name} filter for more than {STRING_LIMIT:,}")
            if name == "join" and value is not None:
                value = list(value)
                sep = rest[0] if rest else kwargs.get("d", "")
                total = sum(len(str(i)) for i in value) + len(str(sep)) * len(value)
                if total > STRING_LIMIT:
                    raise TemplateLimit(f"join would build {total:,} characters; the limit is "
                                        f"{STRING_LIMIT:,}")
                args = (*args[:skip], value, *rest)
            if name == "replace" and len(rest) >= 2:
                text, old, new = str(value), str(rest[0]), str(rest[1])
                grow = (len(text) + 1 if old == "" else text.count(old)) * len(new)
                if grow > STRING_LIMIT:
                    raise TemplateLimit(f"replace would build more than {STRING_LIMIT:,} "
                                        "characters")
            if name == "format" and _WIDTH.search(str(value)):
                raise TemplateLimit("formats with a width of a million or more")
            return self.checked(f(*args, **kwargs))

        if hasattr(f, "jinja_pass_arg"):
            bounded.jinja_pass_arg = f.jinja_pass_arg
        return bounded

    def get_template(self, name, parent=None, globals=None):
        depth = 0
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_name == "root" and frame.f_code.co_filename in self.seen:
                depth += 1
            frame = frame.f_back
        if depth > INCLUDE_DEPTH:
            raise TemplateLimit(f"nests templates more than {INCLUDE_DEPTH} deep "
                                "(does a template include itself?)")
        return super().get_template(name, parent, globals)


def _where(err: BaseException, seen: dict, main: str) -> tuple[str, int | None]:
    """The template and line an error happened at (jinja2 rewrites tracebacks so that
    template frames carry the template's file name and line)."""
    if isinstance(err, TemplateLimit) and err.where:
        return err.where
    if isinstance(err, jinja2.TemplateSyntaxError) and err.lineno:
        name = seen.get(err.filename or "", err.name or main)
        return (main if err.filename in (None, "") else name), err.lineno
    found = (main, None)
    for fr in traceback.extract_tb(err.__traceback__):
        if fr.filename in seen:
            found = (seen[fr.filename], fr.lineno)
    return found


def _what(err: BaseException) -> str:
    if isinstance(err, jinja2.TemplateSyntaxError):
        return err.message or "syntax error"
    if isinstance(err, jinja2.TemplateNotFound):
        return (f"includes {err.name!r}, which is not a file in the template folder or "
                "among symcalc's templates")
    if isinstance(err, jinja2.exceptions.SecurityError):
        return f"not allowed in a template ({err})"
    if isinstance(err, jinja2.UndefinedError):
        return err.message or "undefined value"
    if isinstance(err, TemplateLimit):
        return str(err)
    if isinstance(err, RecursionError):
        return "recursion too deep (does a macro call itself?)"
    if isinstance(err, MemoryError):
        return "out of memory"
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def _alarm(seconds: float):
    """A SIGALRM that raises TemplateLimit after ``seconds`` (main thread, POSIX only)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return None

    def expire(signum, frame):
        raise TemplateLimit(f"took more than {seconds:g} s to render")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return previous


# what a user template's _() fills its fields with: text and numbers, never an object
# (a function, a method) whose attributes a format field could walk or whose repr it shows
_FIELD_TYPES = (str, int, float, Decimal, Fraction, type(None))


class _MessageFormatter(SandboxedFormatter):
    """The sandbox's formatter (``.attr`` and ``[key]`` checked as in a template) that
    shows only text and numbers: ``{f}`` of a function, ``{s.upper}`` or ``{s.upper!r}``
    are refused, never printed as ``<built-in method ...>``."""

    def _plain(self, value):
        if not isinstance(value, (_FIELD_TYPES, jinja2.Undefined)):
            raise SecurityError(f"_() shows text and numbers only (a field is "
                                f"{type(value).__name__!r})")
        return value

    def convert_field(self, value, conversion):
        return super().convert_field(self._plain(value), conversion)

    def format_field(self, value, format_spec):
        return super().format_field(self._plain(value), format_spec)


def user_messages(env: "BoundedSandbox") -> "BoundedSandbox":
    """``_`` for a user template. The package's ``_`` formats with ``str.format``, which
    walks attributes and items outside the sandbox: ``_("{f.__globals__[...]}", f=_)``
    read the environment. Here the translated text is formatted by the sandbox's own
    formatter (:class:`_MessageFormatter`: attributes and items checked, only text and
    numbers shown), a format spec may not take a field (``{x:{w}}``) nor a width of a
    million or more, and the result counts against the template's limits."""
    formatter = _MessageFormatter(env)

    def _(message, **fields):
        text = i18n.gettext(str(message))
        if not fields:
            return text
        if _WIDTH.search(text):
            raise TemplateLimit("formats with a width of a million or more")
        try:
            specs = [spec for _, field, spec, _ in Formatter().parse(text) if field is not None]
        except ValueError as err:
            raise SecurityError(f"_() cannot read {text!r:.60} as a message ({err})") from None
        if any("{" in (spec or "") for spec in specs):
            raise SecurityError("_() takes no field inside a format spec (such as {x:{w}})")
        return env.checked(formatter.vformat(text, (), fields))

    env.globals["_"] = _
    return env


def render_user(path: str, tex: bool, **data) -> str:
    """Render a user's template file in a bounded sandbox (:class:`BoundedSandbox`); it may
    include files of its own folder (never through a link out of it) and the package's
    templates. Any error is one line, ``TEMPLATE:LINE: what``."""
    from ..inputs.files import _reason, label_of

    file = Path(path)
    try:
        if not file.is_file():
            raise SymcalcError("--template", f"{label_of(path)!r} is not a readable file")
        real = file.resolve()
    except OSError as err:  # a status that cannot be read, a name over the system's limit
        raise SymcalcError("--template", f"{label_of(path)!r} cannot be read "
                                         f"({_reason(err)})") from None
    seen: dict = {}
    loader = jinja2.ChoiceLoader([_FolderLoader(real.parent, seen),
                                  jinja2.FileSystemLoader(str(template_dir()))])
    env = user_messages(with_messages(BoundedSandbox(seen, loader=loader, **COMMON,
                                                     **(TEX_SYNTAX if tex else {}))))
    seen[str(real)] = path
    previous = _alarm(TIME_LIMIT)
    out, size = [], 0
    try:
        for chunk in env.get_template(real.name).generate(**data):
            size += len(chunk)
            if size > OUTPUT_LIMIT:
                raise TemplateLimit(f"renders more than {OUTPUT_LIMIT:,} characters")
            out.append(chunk)
    except SymcalcError:
        raise
    except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 (a user's template)
        name, line = _where(err, seen, path)
        raise SymcalcError(f"{name}:{line}" if line else name, _what(err)) from None
    finally:
        if previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return "".join(out)
