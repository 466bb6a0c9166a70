"""Command line: `symcalc COMMAND ...`. Bad input exits with status 2 and one line on stderr."""
from __future__ import annotations

import argparse
import re
import sys
from functools import lru_cache
from importlib import import_module

from .errors import SymcalcError

COMMANDS = ("report", "closed_form", "forms", "derive", "handout", "sweep", "solve", "page")


def usage_error(message: str) -> SymcalcError:
    """argparse's message as ``FIELD: RULE`` (the field is the argument, never the program
    name, which ``main`` prints once)."""
    m = re.match(r"argument ([^:]+): (.+)$", message, re.S)
    if m:  # "argument --unit: invalid choice: ..." -> "--unit: invalid choice: ..."
        return SymcalcError(m[1].split("/")[0], m[2])
    m = re.match(r"unrecognized arguments: (.*)$", message, re.S)
    if m:
        many = " " in m[1].strip()
        return SymcalcError(m[1] if m[1].strip() else repr(m[1]),
                            f"{'are not arguments' if many else 'is not an argument'} "
                                  "of this command (see symcalc COMMAND --help)")
    m = re.match(r"the following arguments are required: (.+)$", message, re.S)
    if m:
        return SymcalcError(m[1], "is required" if "," not in m[1] else "are required")
    m = re.match(r"ambiguous option: (\S+) could match (.+)$", message, re.S)
    if m:
        return SymcalcError(m[1], f"is ambiguous (could be {m[2]})")
    field, sep, rule = message.partition(": ")
    return SymcalcError(field, rule) if sep and field and rule else SymcalcError("arguments", message)


@lru_cache(maxsize=None)
def _columns() -> int:
    """The terminal's width as argparse's help would take it (COLUMNS, else the terminal,
    else 80), without importing shutil (and with it bz2 and lzma) on every command."""
    import os

    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         width if width is not None else _columns() - 2)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, status 2, no usage dump
        raise usage_error(message)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or only the parser of the command module ``only`` (a quick
    report then does not pay for importing and building the others)."""
    parser = _Parser(prog="symcalc", description="Symbolic accounting for transformer models: "
                     "parameters, FLOPs and memory, exact, with their derivations.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in (only,) if only else COMMANDS:
        import_module(f"symcalc.commands.{name}").register(sub)
    return parser


def _module_of(argv: list[str]) -> str | None:
    """The command module that registers ``argv[0]``, if it names a command."""
    name = {"presets": "report"}.get(argv[0], argv[0].replace("-", "_")) if argv else None
    return name if name in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(_module_of(argv)).parse_args(argv)
        if not getattr(args, "func", None):
            raise SymcalcError("COMMAND", "is required: one of report, presets, closed-form, "
                                          "forms, derive, handout, sweep, solve, page (see symcalc --help)")
        if getattr(args, "part", "text") != "text" and args.command != "report":
            raise SymcalcError("--part", f"{args.part} is only for report (this command "
                                         "covers the language model of a multimodal config)")
        lang = getattr(args, "lang", None) or "en"  # --lang of derive, handout, report
        if lang == "en":  # what documents are written in unless told: no switch to make
            return args.func(args)
        from .i18n import using

        with using(lang):
            return args.func(args)
    except SymcalcError as err:
        from .render.escape import one_line

        print(f"symcalc: error: {one_line(str(err))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
