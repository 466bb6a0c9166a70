"""The command line's argument parser (argparse, with one-line errors): every command's
parser, or only the one a command line names. Imported by :func:`symcalc.cli.main` once the
garbage collector is paused (see there)."""
from __future__ import annotations

import argparse
import re
import sys
from functools import lru_cache
from importlib import import_module

from ..errors import SymcalcError

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
    # argparse translates its headings with gettext while it builds a parser, and gettext's
    # first lookup imports the locale module and builds its alias tables: about 3 % of a
    # report's run. symcalc's command line is English (usage_error reads argparse's messages
    # as English), so the headings are taken as written while the parser is built; argparse's
    # own lookup is back in place before any argument is parsed.
    translate, argparse._ = argparse._, str
    try:
        parser = _Parser(prog="symcalc", description="Symbolic accounting for transformer "
                         "models: parameters, FLOPs and memory, exact, with their derivations.")
        sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
        for name in (only,) if only else COMMANDS:
            import_module(f"symcalc.commands.{name}").register(sub)
    finally:
        argparse._ = translate
    return parser


def module_of(argv: list[str]) -> str | None:
    """The command module that registers ``argv[0]``, if it names a command."""
    name = {"presets": "report"}.get(argv[0], argv[0].replace("-", "_")) if argv else None
    return name if name in COMMANDS else None
