"""Command line: `symcalc COMMAND ...`. Bad input exits with status 2 and one line on stderr."""
from __future__ import annotations

import gc
import os
import sys

from .errors import SymcalcError


def main(argv: list[str] | None = None) -> int:
    """Run one command line (``argv``, else the process's own arguments); the exit status.

    The cyclic garbage collector is paused while the command's modules load and its
    arguments parse, and for the whole of a command that says ``collect=False`` (a report:
    it allocates tens of thousands of lists and dicts from the term table and frees none of
    them before it ends; the collections cost it about 6 % of its run, bench/run.py). Called
    without ``argv`` (the console script, ``python -m symcalc``), main is the process, which
    ends with the command, and the collector stays paused: turning it back on would run one
    full collection just before exit. Called with ``argv`` (tests, other programs), it is
    turned back on.

    A command run as the process that says ``collect=False`` also skips the interpreter's
    teardown (:func:`_leave`): freeing every object a report made, module by module, and
    the final collection cost it about 11 % of its instructions (docs/performance.md)."""
    process = argv is None
    code, short_lived = _run(argv, process)
    if process and short_lived:
        _leave(code)
    return code


def _leave(code: int) -> None:
    """End the process with status ``code`` now, without the interpreter's teardown: flush
    what was printed (a reader that closed the pipe early is not an error, as in
    :func:`main`), then ``os._exit``. symcalc registers no exit handlers and holds no open
    files by then."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # ValueError: a stream already closed
            pass
    os._exit(code)


def _run(argv: list[str] | None, process: bool) -> tuple[int, bool]:
    """The exit status, and whether the command said ``collect=False``."""
    short_lived = False
    argv = sys.argv[1:] if argv is None else list(argv)
    collecting = gc.isenabled()
    gc.disable()
    try:
        from .commands.plain_report import plain_report

        args = plain_report(argv)  # `report MODEL [--json] [--gpu NAME]` without argparse
        if args is None:
            from .commands.parser import build_parser, module_of

            args = build_parser(module_of(argv)).parse_args(argv)
        if collecting and getattr(args, "collect", True):
            gc.enable()
        short_lived = getattr(args, "collect", True) is False
        if not getattr(args, "func", None):
            raise SymcalcError("COMMAND", "is required: one of report, presets, closed-form, "
                                          "forms, derive, handout, sweep, solve, page (see symcalc --help)")
        if getattr(args, "part", "text") != "text" and args.command != "report":
            raise SymcalcError("--part", f"{args.part} is only for report (this command "
                                         "covers the language model of a multimodal config)")
        lang = getattr(args, "lang", None) or "en"  # --lang of derive, handout, report
        if lang == "en":  # what documents are written in unless told: no switch to make
            return args.func(args), short_lived
        from .i18n import using

        with using(lang):
            return args.func(args), short_lived
    except SymcalcError as err:
        from .render.escape import one_line

        print(f"symcalc: error: {one_line(str(err))}", file=sys.stderr)
        return 2, short_lived
    except BrokenPipeError:
        return 0, short_lived
    finally:
        if collecting and not process:
            gc.enable()


if __name__ == "__main__":
    sys.exit(main())
