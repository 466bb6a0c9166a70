"""jinja2 templates: the package's own (``symcalc/templates`` in an installed wheel, the
repository's top-level ``templates/`` in a development checkout) and a user's (``--template
FILE``, run in jinja2's sandbox).

Markdown templates use jinja2's usual delimiters. LaTeX templates (``*.tex.j2``) use
delimiters that never clash with TeX's braces and percent signs::

    ((* for x in xs *)) ... ((* endfor *))     statements
    ((( x )))                                  values
    ((= a comment =))

Templates never compute: every value they show is prepared by the renderer.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import jinja2
import jinja2.sandbox

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


@lru_cache(maxsize=None)
def environment(tex: bool) -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(template_dir()))
    return jinja2.Environment(loader=loader, **COMMON, **(TEX_SYNTAX if tex else {}))


def render(name: str, **data) -> str:
    """Render the package template ``name`` (e.g. ``derivation.md.j2``) with ``data``."""
    return environment(name.endswith(".tex.j2")).get_template(name).render(**data)


def render_user(path: str, tex: bool, **data) -> str:
    """Render a user's template file in jinja2's sandbox (no attribute tricks, no access to
    Python internals); it may include or extend the package's templates."""
    file = Path(path)
    if not file.is_file():
        raise SymcalcError("--template", f"{path!r} is not a readable file")
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(file.parent.resolve())),
                                  jinja2.FileSystemLoader(str(template_dir()))])
    env = jinja2.sandbox.SandboxedEnvironment(loader=loader, **COMMON, **(TEX_SYNTAX if tex else {}))
    try:
        return env.get_template(file.name).render(**data)
    except jinja2.TemplateSyntaxError as err:
        raise SymcalcError("--template", f"{path}: line {err.lineno}: {err.message}") from None
    except jinja2.exceptions.SecurityError as err:
        raise SymcalcError("--template", f"{path}: not allowed in a template ({err})") from None
    except jinja2.UndefinedError as err:
        raise SymcalcError("--template", f"{path}: {err.message}") from None
