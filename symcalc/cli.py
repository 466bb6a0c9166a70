"""Command line: `symcalc COMMAND ...`. Bad input exits with status 2 and one line on stderr."""
from __future__ import annotations

import argparse
import sys
from importlib import import_module

from .errors import SymcalcError

COMMANDS = ("report", "closed_form", "forms", "derive", "handout", "sweep")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2, no usage dump
        raise SymcalcError(self.prog, message)


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
            build_parser().print_help()
            return 2
        return args.func(args)
    except SymcalcError as err:
        print(f"symcalc: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
